"""One module per subcommand: `add_parser(subparsers)` and a handler returning an exit code."""
