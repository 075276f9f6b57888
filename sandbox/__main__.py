"""`python -m sandbox [--port P] [--no-browser] [--time-limit S] [--dist DIR]`: the exercise sandbox in lab mode
(a local server on 127.0.0.1; see sandbox/server.py)."""
import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
