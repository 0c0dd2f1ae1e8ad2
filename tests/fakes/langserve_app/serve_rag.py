"""A real LangServe 0.3 app (`add_routes` over a LangChain runnable), run by tests/fakes/langserve_server.py.

`/rag`: a chain typed `input_type=Question` whose output is `{"answer", "context"}`, the context ten long
LangChain `Document`s (over 64 KiB of reply), ids in `metadata.source`. `/boom`: a chain that raises (LangServe
answers 500). Started as `python serve_rag.py PORT`; nothing here talks to any other host.
"""

import os
import sys

os.environ["LANGCHAIN_TRACING_V2"] = "false"

import uvicorn
from fastapi import FastAPI
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda, RunnableParallel
from langserve import add_routes
from pydantic import BaseModel

REFUND = "Refunds are paid back to the original card within 5 working days of the return arriving. "


class Question(BaseModel):
    question: str


def retrieve(question: str) -> list[Document]:
    first = Document(page_content=REFUND * 30, metadata={"source": "doc-refund-1", "title": "Refunds"})
    rest = [
        Document(page_content=f"Policy note {i}. " * 500, metadata={"source": f"doc-note-{i}", "title": f"Note {i}"})
        for i in range(9)
    ]
    return [first, *rest]


def answer(state: dict) -> str:
    return "Refunds are paid back within 5 working days."


def fail(_: dict) -> str:
    raise RuntimeError("the chain failed")


chain = RunnableParallel(context=RunnableLambda(lambda x: retrieve(x["question"]))) | RunnableParallel(
    answer=RunnableLambda(answer), context=RunnableLambda(lambda state: state["context"])
)
app = FastAPI()
add_routes(app, chain.with_types(input_type=Question), path="/rag")
add_routes(app, RunnableLambda(fail).with_types(input_type=Question), path="/boom")

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
