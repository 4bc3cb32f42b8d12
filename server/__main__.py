from server.cli import main

if __name__ == "__main__":  # not when a worker process starts from this module (multiprocessing's spawn)
    raise SystemExit(main())
