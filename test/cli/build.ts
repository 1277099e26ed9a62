// The built CLI artifacts for process-level tests: rebuilt when missing or older than the source
// (npm test builds first anyway), one build at a time across parallel test workers.
export { ensureCli } from "../helpers/build.ts";
