"""Screenshots for the README: the seed's page on a built site (its top, down to the SGLang code it
quotes, which stays out of this repository) and `explain`'s output in a terminal-like frame.

    .venv/bin/python -m extractor site --release 0.5.23 -o /tmp/site --build
    .venv/bin/python docs/screenshots.py /tmp/site docs      # site-offload-kvcache.png, explain-seed.png
"""
import functools, html, http.server, subprocess, sys, threading
from pathlib import Path
from playwright.sync_api import sync_playwright

site, out = Path(sys.argv[1]), Path(sys.argv[2])
class Q(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Q, directory=str(site / "public")))
threading.Thread(target=server.serve_forever, daemon=True).start()
explain = subprocess.run([sys.executable, "-m", "extractor", "explain", "--release", "0.5.23",
                          "ValueError: The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent,
                         env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"}).stdout
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"])
    page = b.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"http://127.0.0.1:{server.server_port}/errors/38f325b6789c0be0.html")
    page.wait_for_timeout(500)
    source = page.locator("h2#source").bounding_box()["y"] - 10
    page.screenshot(path=str(out / "site-offload-kvcache.png"), clip={"x": 0, "y": 0, "width": 1280, "height": source})
    term = b.new_page(viewport={"width": 980, "height": 200})
    term.set_content("<body style='margin:0;background:#1e1e1e'><pre style='margin:0;padding:16px;color:#e6e6e6;"
                     "font:13px/1.35 DejaVu Sans Mono,monospace'>$ sglang-constraints explain \"ValueError: The argument "
                     "disaggregation-decode-enable-offload-kvcache is only supported for decode side.\"\n"
                     + html.escape(explain) + "</pre></body>")
    term.screenshot(path=str(out / "explain-seed.png"), full_page=True)
    b.close()
