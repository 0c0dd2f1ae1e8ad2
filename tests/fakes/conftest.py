from tests.fakes.fixtures import fake_github, fake_openai  # noqa: F401
