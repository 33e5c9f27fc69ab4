// Starts the app from a file rather than an inline script: the page's Content Security Policy
// forbids inline script. scripts/build-site writes this tag into index.html with the hashed
// names of the app's JS glue and wasm in data attributes.
//
// The boot is split so that no task on the main thread is long (over 50 ms):
// - the wasm is compiled from its bytes, not streamed: V8 validates a streamed module's
//   functions on the main thread as the bytes arrive (a 30-80 ms task), a module compiled from a
//   buffer on a background thread; given the URL, the glue's `init` would stream it;
// - it is instantiated one task after the compile ends, and `main` mounts the page one task
//   later still (see `app.rs` on the boot);
// - meanwhile the page's fonts are laid out one per frame (see `.font-warmup` in index.html).
warmFonts();
const tag = document.querySelector('script[data-kinetoscope-boot]');
const glue = import(tag.dataset.js);
const module = await compile(tag.dataset.wasm);
await new Promise((resolve) => setTimeout(resolve, 0));
const { default: init } = await glue;
await init({ module_or_path: module });

// Fetches and compiles the wasm at `url`.
async function compile(url) {
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`failed to fetch Wasm: ${response.status} ${response.statusText} fetching '${url}'`);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

// Shows the font warm-up's lines one per animation frame: Chromium looks up each font
// synchronously (2-24 ms on a cold start) the first time it lays it out, so all of them in one frame made a
// long task.
function warmFonts() {
  const lines = [...document.querySelectorAll('.font-warmup [hidden]')];
  const next = () => {
    const line = lines.shift();
    if (!line) return;
    line.hidden = false;
    requestAnimationFrame(next);
  };
  requestAnimationFrame(next);
}
