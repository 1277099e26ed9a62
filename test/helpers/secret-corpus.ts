/**
 * The secret corpus: realistic secret shapes that must never survive redaction, and look-alikes
 * that must survive untouched. All secrets here are fake; most are assembled from pieces so that
 * repository scanners do not flag this file. Shared by test/core/seed/redact.test.ts (each case)
 * and test/fuzz/redact.fuzz.test.ts (each case planted anywhere in a session).
 */
/** Deterministic pseudo-random characters from an alphabet (Park–Miller, no Math.random). */
export function chars(
	n: number,
	seed: number,
	alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
): string {
	let x = (seed * 7919 + 1) % 2147483647;
	let out = "";
	for (let i = 0; i < n; i++) {
		x = (x * 48271) % 2147483647;
		out += alphabet[x % alphabet.length];
	}
	return out;
}
export const HEX = "0123456789abcdef";
export const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const pem = (label: string, seed: number) =>
	[
		`-----BEGIN ${label}-----`,
		chars(64, seed, B64),
		chars(64, seed + 1, B64),
		`${chars(40, seed + 2, B64)}==`,
		`-----END ${label}-----`,
	].join("\n");

const jwt = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9.${chars(43, 7, `${B64.slice(0, 62)}-_`)}`;

export interface SecretCase {
	name: string;
	text: string;
	/** Substrings that must not survive. */
	secrets: string[];
}

function secretCase(name: string, before: string, secret: string, after = ""): SecretCase {
	return { name, text: `${before}${secret}${after}`, secrets: [secret] };
}

const SK_ANT = `${"sk-"}ant-api03-${chars(93, 1, `${B64.slice(0, 62)}-_`)}AA`;
const SK_PROJ = `${"sk-"}proj-${chars(40, 2)}_${chars(40, 3)}`;
const AKIA = `${"AKIA"}${chars(16, 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`;
const AWS_SECRET = chars(40, 5, B64);

export const SECRETS: SecretCase[] = [
	secretCase("Anthropic key in env", "ANTHROPIC_API_KEY=", SK_ANT),
	secretCase("Anthropic key in a log line", "[auth] using key ", SK_ANT, " for claude-sonnet-4-5"),
	secretCase("OpenAI project key", "OPENAI_API_KEY=", SK_PROJ),
	secretCase("OpenAI legacy key in JSON", '{"openai": "', `${"sk-"}${chars(48, 6)}`, '"}'),
	secretCase("OpenRouter key", "Authorization header set from ", `${"sk-"}or-v1-${chars(64, 7, HEX)}`),
	secretCase("AWS access key id", "aws_access_key_id = ", AKIA),
	secretCase("AWS secret key in credentials file", "aws_secret_access_key = ", AWS_SECRET),
	secretCase("AWS secret key in env", "export AWS_SECRET_ACCESS_KEY=", AWS_SECRET),
	secretCase("AWS STS JSON secret", '    "SecretAccessKey": "', chars(40, 8, B64), '",'),
	secretCase("AWS STS JSON session token", '    "SessionToken": "', `IQoJb3JpZ2luX2Vj${chars(120, 9, B64)}`, '",'),
	secretCase(
		"AWS temporary key id",
		'"AccessKeyId": "',
		`${"ASIA"}${chars(16, 10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
		'"',
	),
	secretCase("GitHub classic token", "GITHUB_TOKEN=", `${"ghp_"}${chars(36, 11)}`),
	secretCase("GitHub OAuth token", "oauth_token: ", `${"gho_"}${chars(36, 12)}`),
	secretCase("GitHub fine-grained token", "token ", `${"github_pat_"}${chars(22, 13)}_${chars(59, 14)}`),
	secretCase(
		"GitHub app token in a clone URL",
		"git clone https://x-access-token:",
		`${"ghs_"}${chars(36, 15)}`,
		"@github.com/org/repo.git",
	),
	secretCase(
		"Slack bot token",
		"SLACK_BOT_TOKEN=",
		`${"xoxb-"}${chars(12, 16, "0123456789")}-${chars(13, 17, "0123456789")}-${chars(24, 18)}`,
	),
	secretCase(
		"Slack user token",
		"slack user token: ",
		`${"xoxp-"}${chars(12, 19, "0123456789")}-${chars(12, 20, "0123456789")}-${chars(32, 21, HEX)}`,
	),
	secretCase(
		"Slack webhook",
		"curl -X POST https://hooks.slack.com/services/",
		`T${chars(8, 22, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}/B${chars(8, 23, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}/${chars(24, 24)}`,
	),
	secretCase("Stripe live secret key", "stripe.api_key = '", `${"sk_live_"}${chars(24, 25)}`, "'"),
	secretCase("Stripe restricted key", "STRIPE_KEY=", `${"rk_live_"}${chars(24, 26)}`),
	secretCase("Stripe webhook secret", "endpoint secret ", `${"whsec_"}${chars(32, 27)}`),
	secretCase(
		"Google API key",
		"const maps = new Maps({ apiKey: '",
		`${"AIza"}${chars(35, 28, `${B64.slice(0, 62)}-_`)}`,
		"' });",
	),
	secretCase("Google OAuth access token", "access_token=", `${"ya29."}${chars(60, 29, `${B64.slice(0, 62)}-_`)}`),
	secretCase(
		"Google OAuth client secret",
		'client_secret: "',
		`${"GOCSPX-"}${chars(28, 30, `${B64.slice(0, 62)}-_`)}`,
		'"',
	),
	secretCase("JWT bearer header", "curl -H 'Authorization: Bearer ", jwt, "' https://api.example.com/me"),
	secretCase("JWT in JSON", '{"id_token":"', jwt, '","expires_in":3600}'),
	{
		name: "PEM RSA private key",
		text: `key.pem:\n${pem("RSA PRIVATE KEY", 31)}\n`,
		secrets: [chars(64, 31, B64), chars(40, 33, B64)],
	},
	{ name: "PEM EC private key", text: pem("EC PRIVATE KEY", 34), secrets: [chars(64, 34, B64), chars(64, 35, B64)] },
	{
		name: "PEM OpenSSH private key",
		text: `$ cat ~/.ssh/id_ed25519\n${pem("OPENSSH PRIVATE KEY", 37)}`,
		secrets: [chars(64, 37, B64)],
	},
	{
		name: "PEM key JSON-escaped in a service account file",
		text: `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${chars(64, 40, B64)}\\n${chars(64, 41, B64)}\\n-----END PRIVATE KEY-----\\n", "client_email": "bot@proj.iam.gserviceaccount.com"}`,
		secrets: [chars(64, 40, B64), chars(64, 41, B64)],
	},
	{
		name: "PEM key cut off by truncated output",
		text: `-----BEGIN PRIVATE KEY-----\n${chars(64, 42, B64)}\n${chars(30, 43, B64)}`,
		secrets: [chars(64, 42, B64), chars(30, 43, B64)],
	},
	secretCase("password= on a command line", "mysql -u root --password=", "Tr0ub4dor3x", " -e 'select 1'"),
	secretCase("PASSWORD: in YAML", "  PASSWORD: ", "correct-horse-battery-staple"),
	secretCase("quoted password with spaces", "DB_PASSWORD='", "p@ss w0rd is long!", "'"),
	secretCase("camelCase password property", "const conn = { user: 'app', dbPass: '", "Sommer2024!x", "' };"),
	secretCase("postgres URL credentials", "DATABASE_URL=postgres://admin:", "Sup3rS3cret", "@db.example.com:5432/prod"),
	secretCase("password containing @ in a URL", "redis://default:", "p@ssw0rd@@x", "@cache.internal:6379"),
	secretCase(
		"https user:token@github.com",
		"remote: https://octocat:",
		chars(40, 44, HEX),
		"@github.com/octo/repo.git",
	),
	secretCase("export FOO_API_KEY", "export FOO_API_KEY=", chars(32, 45)),
	secretCase("SECRET_TOKEN in quotes", 'SECRET_TOKEN="', chars(48, 46), '"'),
	secretCase("npm token in .npmrc", "//registry.npmjs.org/:_authToken=", `${"npm_"}${chars(36, 47)}`),
	secretCase("opaque bearer token", "Authorization: Bearer ", chars(40, 48)),
	secretCase("basic auth header", "Authorization: Basic ", "YWRtaW46aHVudGVyMg=="),
	secretCase("GitLab token", "PRIVATE-TOKEN: ", `${"glpat-"}${chars(20, 49)}`),
	secretCase("Hugging Face token", "HF_TOKEN=", `${"hf_"}${chars(34, 50)}`),
	secretCase("SendGrid key", "SENDGRID_API_KEY=", `${"SG."}${chars(22, 51)}.${chars(43, 52)}`),
	secretCase("Datadog hex API key", "DD_API_KEY=", chars(32, 53, HEX)),
	secretCase(
		"Azure storage account key",
		"DefaultEndpointsProtocol=https;AccountName=x;AccountKey=",
		`${chars(86, 54, B64)}==`,
		";EndpointSuffix=core.windows.net",
	),
	secretCase("Telegram bot token", "bot token ", `${chars(10, 55, "123456789")}:AA${chars(33, 56)}`),
	// Round two (issue 16): shapes an outside probe saw reach the index, and their relatives.
	secretCase("mysql -pPASSWORD", "mysql -h db -u root -p", "Tr0ub4dor&3", " app < dump.sql"),
	secretCase("curl -u user:password", "curl -u admin:", "hunter2-Sekrit", " https://api.example.com/v1/me"),
	secretCase("curl --user in quotes", "curl --user 'deploy:", "pa55-W0rd-x", "' https://ci.example.com"),
	secretCase("sshpass -p", "sshpass -p ", "Winter2024!x", " ssh deploy@10.0.0.7 uptime"),
	secretCase("docker login -p", "docker login -u bot -p ", "dckr-Zq81-pass", " registry.example.com"),
	secretCase("any tool's --password flag", "pg_dump --host db --password ", "n0t-so-secret-99", " prod"),
	secretCase("a --db-password= flag", "./manage migrate --db-password=", "S3cure.Pass-42", " --verbose"),
	secretCase("keytool -storepass", "keytool -list -keystore app.jks -storepass ", "changeit-2024", ""),
	secretCase("openssl -passin pass:", "openssl rsa -in key.pem -passin pass:", "Sup3r-s3cret", " -out plain.pem"),
	secretCase("redis-cli -a", "redis-cli -h cache.internal -a ", "r3d1s-P4ss", " ping"),
	secretCase("ldapsearch -w", "ldapsearch -x -D cn=admin,dc=example,dc=org -w ", "ld4p-Adm1n", " -b dc=example"),
	secretCase("a quoted --passphrase", 'gpg --batch --passphrase "', "correct horse battery", '" -d notes.gpg'),
	secretCase("redis URL with an empty user", "REDIS_URL=redis://:", "Sup3rS3cretRedis", "@cache.internal:6379/0"),
	secretCase(
		"git clone with credentials",
		"git clone https://deploy:",
		"gitPa55word-77",
		"@git.example.com/team/repo.git",
	),
	secretCase("mongodb+srv credentials", "mongodb+srv://app:", "m0ng0-Pass", "@cluster0.abcde.mongodb.net/db"),
	secretCase("Django SECRET_KEY", "SECRET_KEY = '", "django-insecure-k3#x!v@9&q%z^w*2(e)r_t+y=u", "'"),
	secretCase("Rails secret_key_base", "  secret_key_base: ", chars(128, 90, HEX)),
	secretCase("CLIENT_SECRET in env", "export CLIENT_SECRET=", "plain words are fine-too".replace(/ /g, "-")),
	secretCase("JSON client secret", '{"clientSecret": "', "s3cr3t.v4lue-with-dots", '"}'),
	secretCase(
		"Telegram bot token in a URL path",
		"GET https://api.telegram.org/bot",
		`${chars(10, 91, "123456789")}:AA${chars(33, 92)}`,
		"/getMe HTTP/1.1",
	),
	secretCase(
		"Discord webhook token",
		"POST https://discord.com/api/webhooks/",
		`${chars(18, 93, "0123456789")}/${chars(68, 94, `${B64.slice(0, 62)}-_`)}`,
	),
	secretCase("Cookie header", "curl -H 'Cookie: session=", chars(40, 95), "' https://app.example.com/"),
	secretCase("second value of a Cookie header", "Cookie: theme=dark; sid=", "a8Zk2Lp0Qx7Wn3", "; lang=en"),
	secretCase("Set-Cookie header", "< Set-Cookie: sid=", chars(32, 96, HEX), "; Path=/; HttpOnly; Secure"),
	secretCase("curl --cookie", 'curl --cookie "remember_me=', "yes-please-keep-me", '" https://app.example.com'),
	secretCase(
		"age secret key",
		"# created: 2024-01-01\n",
		`${"AGE-SECRET-KEY-1"}${chars(58, 97, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")}`,
	),
	secretCase("DigitalOcean token", "DIGITALOCEAN_ACCESS_TOKEN=", `${"dop_v1_"}${chars(64, 98, HEX)}`),
	secretCase("session token in YAML", "session_token: ", chars(48, 99, B64)),
	secretCase("X-Api-Key header", "X-Api-Key: ", chars(32, 100)),
	secretCase("PGPASSWORD before a command", "PGPASSWORD=", "pg-P4ssw0rd", " psql -h db -U app"),
];

export const LOOK_ALIKES: string[] = [
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/index.js",
	"sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
	"9fceb02 Fix the login redirect (#1234)",
	"fingerprint 3f786850e387550fdab836ed7e6dc881de23001b",
	"session 550e8400-e29b-41d4-a716-446655440000 started",
	"echo aGVsbG8gd29ybGQ= | base64 -d",
	"handleUserMessageSelectorKeybindingFallback2 is defined in selector.ts",
	"node v22.19.0, typescript 5.9.3, 1.2.3-beta.4",
	"Please reset your password before logging in; the password-reset flow failed.",
	"request with max_tokens=4096 and token_count: 12345",
	"const client = new Client({ apiKey: config.apiKey, password: req.body.password });",
	"interface Login { password: string; token?: string }",
	"const token = await getToken();",
	"TOKEN=$GITHUB_TOKEN password: $" + "{DB_PASSWORD} secret=<your-secret>", // a shell reference, not a template
	"git@github.com:org/repo.git and https://github.com/org/repo/pull/42",
	'"integrity": "sha512-7NbKs0sRDNKaiGyR3FVkEyeqIu5zvBVtiebyy1uuCsW3TUhUVhpQP0BV/+mqzjDu8x2j+MYqwNQCfGdTcuN6kw=="',
	"image digest sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1",
	"process.env.OPENAI_API_KEY is not set",
	"scikit-learn task-runner-item disk-usage-report",
	"PWD=/home/me/project OLDPWD=/tmp",
	'key: "user-settings-v2"',
	"Send a Bearer token in the Authorization header.",
	'{"secret": true, "password": null, "passwordless": false}',
	"bypass=1 compass=north",
	"Data pass: 3 of 4",
	// Round two: flags, names and URLs that look like the new shapes but hold no secret.
	"ssh -p 2222 deploy@example.com && mkdir -p src/core/seed",
	"docker run -p 8080:80 -u 1000:1000 -v /data:/data nginx",
	"gcc -pthread -pedantic -O2 main.c && tar -pxzf dist.tar.gz && cp -pR src out && cp -pRv a b",
	"git push -u origin main && git log -p -- src/a.ts",
	'echo "$CR_PAT" | docker login ghcr.io -u octocat --password-stdin',
	'curl -u "$USER:$PASS" https://api.example.com',
	"docker run -u root:root alpine id",
	'fetch(url, { credentials: "include", method: "POST" })',
	"password_min_length: 12\npassword_reset_url: https://example.com/reset",
	"secret_name: db-credentials\nsecretName: prod-tls",
	"session_id: 550e8400-e29b-41d4-a716-446655440000",
	"keyboard: us, hotkey: ctrl+k, monkey: banana",
	"--key-file ./certs/server.pem --api-key $API_KEY --token-env GITHUB_TOKEN",
	"Cookie consent banner shown; the session cookie expired after 30 minutes.",
	"https://api.telegram.org/bot/getMe returns 401 without a token",
	"see https://discord.com/api/webhooks for the docs",
	"python -m http.server -p 8000",
	"AGE-SECRET-KEY is the prefix age uses for identities",
];
