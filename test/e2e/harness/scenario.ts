// One fake model plus one sandbox wired to it, torn down together: the usual starting point of an e2e test.
import { type AnthropicModel, type AnthropicModelOptions, startAnthropicModel } from "./anthropic-model.ts";
import { type FakeModel, type FakeModelOptions, startFakeModel } from "./fake-model.ts";
import { netViolations } from "./pi-env.ts";
import { createSandbox, type Sandbox, type SandboxOptions } from "./sandbox.ts";

export interface ScenarioOptions extends Omit<SandboxOptions, "fakeUrl"> {
	fake?: FakeModelOptions;
}

export interface Scenario<F = FakeModel> {
	fake: F;
	sandbox: Sandbox;
	/** Registers teardown work (closing an RPC client, killing tmux) to run first in dispose(), newest first. */
	defer(fn: () => unknown): void;
	dispose(): Promise<void>;
}

export async function startScenario(options: ScenarioOptions = {}): Promise<Scenario> {
	const { fake: fakeOptions, ...sandboxOptions } = options;
	const fake = await startFakeModel(fakeOptions);
	return scenarioOf(fake, createSandbox({ ...sandboxOptions, fakeUrl: fake.url }));
}

export interface AnthropicScenarioOptions extends Omit<SandboxOptions, "fakeUrl" | "api"> {
	fake?: AnthropicModelOptions;
}

/** Like startScenario, with the fake Anthropic Messages server and models.json set to `anthropic-messages`. */
export async function startAnthropicScenario(
	options: AnthropicScenarioOptions = {},
): Promise<Scenario<AnthropicModel>> {
	const { fake: fakeOptions, ...sandboxOptions } = options;
	const fake = await startAnthropicModel(fakeOptions);
	return scenarioOf(fake, createSandbox({ ...sandboxOptions, fakeUrl: fake.url, api: "anthropic-messages" }));
}

function scenarioOf<F extends { close(): Promise<void> }>(fake: F, sandbox: Sandbox): Scenario<F> {
	const deferred: Array<() => unknown> = [];
	return {
		fake,
		sandbox,
		defer: (fn) => {
			deferred.push(fn);
		},
		async dispose() {
			const errors: unknown[] = [];
			for (const fn of deferred.reverse()) {
				try {
					await fn();
				} catch (error) {
					errors.push(error);
				}
			}
			await fake.close();
			// Nothing in Pi's process (context-fold included) may connect anywhere but the fake model.
			const violations = netViolations(sandbox);
			sandbox.cleanup();
			if (errors.length > 0) throw errors[0];
			if (violations.length > 0) {
				throw new Error(
					`network connections other than to the fake model: ${violations.map((v) => `${v.kind} ${v.target}\n${v.stack ?? ""}`).join("\n")}`,
				);
			}
		},
	};
}
