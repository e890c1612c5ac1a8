from session_browser.cli import main

if __name__ == "__main__":
    main(prog_name="session-browser")
