// The extension's entry for Pi (package.json `pi.extensions`). It sits at the package root because Pi
// names an extension after what holds its index.js: the package for an npm or git source, the
// directory for a local path. The code is the bundle built into dist/index.js by `npm run build` (or
// by the `prepare` script on `npm install`).
export { default } from "./dist/index.js";
