// Starts the app from a file rather than an inline script: the page's Content Security Policy
// forbids inline script. Trunk writes this tag (Trunk.toml `pattern_script`) with the hashed
// names of the app's JS glue and wasm in data attributes.
const tag = document.querySelector('script[data-kinetoscope-boot]');
const { default: init } = await import(tag.dataset.js);
await init({ module_or_path: tag.dataset.wasm });
