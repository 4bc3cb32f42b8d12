from server.cli import main

if __name__ == "__main__":  # never on import (a process re-reading the main module must not start a server)
    raise SystemExit(main())
