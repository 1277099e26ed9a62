// npm as this machine's user has it configured. test/setup.ts gives every test a private HOME, which
// holds no npm configuration; a test that runs npm against the registry or its cache asks for the
// user's settings explicitly (their HOME, not the test's).
import { execFileSync } from "node:child_process";
import { userInfo } from "node:os";

const cached = new Map<string, string>();

/** One npm setting (`cache`, `globalconfig`, `userconfig`, ...) as the user's own npm reports it. */
export function userNpmConfig(key: string): string {
	let value = cached.get(key);
	if (value === undefined) {
		value = execFileSync("npm", ["config", "get", key], {
			env: { ...process.env, HOME: userInfo().homedir },
			encoding: "utf8",
		}).trim();
		cached.set(key, value);
	}
	return value;
}
