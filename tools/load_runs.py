"""What the long load runs share (tools/chaos.py, tools/soak.py): free ports and the command line."""

import argparse
import asyncio
import socket
import sys
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on at the moment."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_load(description, main_async, minutes, more_arguments=lambda parser: None):
    """Parses --switchboard, --minutes (default `minutes`), --seed and what `more_arguments` adds,
    runs `main_async(args)` and returns its status; 2 when it raised RuntimeError (it could not run)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--switchboard", required=True, help="the switchboard executable")
    parser.add_argument("--minutes", type=float, default=minutes)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    more_arguments(parser)
    args = parser.parse_args()
    try:
        return asyncio.run(main_async(args))
    except RuntimeError as error:
        print(f"could not run: {error}", file=sys.stderr)
        return 2
