// Preloaded into Pi's Node process (NODE_OPTIONS="--import <this file>") by every e2e run: records
// every network connection the process attempts (TCP and TLS through net.Socket#connect, which
// http, https, undici/fetch and http2 all use; UDP; DNS lookups of names) as one JSON line in
// CF_NET_LOG. Targets listed in CF_NET_ALLOW (host:port, comma-separated: the fake model) are logged
// as allowed; anything else is a violation the test fails on. Nothing is blocked, only recorded, so
// the test sees exactly what was attempted.

import dgram from "node:dgram";
import dns from "node:dns";
import { appendFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";

const LOG = process.env.CF_NET_LOG;
const ALLOW = new Set((process.env.CF_NET_ALLOW ?? "").split(",").filter((s) => s.length > 0));

function record(kind, target) {
	if (!LOG) return;
	const allowed = ALLOW.has(target);
	const stack = allowed ? undefined : (new Error().stack ?? "").split("\n").slice(3, 14).join("\n");
	try {
		const line = { kind, target, allowed, pid: process.pid, script: process.argv[1] ?? "", ...(stack && { stack }) };
		appendFileSync(LOG, `${JSON.stringify(line)}\n`);
	} catch {
		// The log is best effort; a failure to log must not change what Pi does.
	}
}

function tcpTarget(args) {
	let first = args[0];
	if (Array.isArray(first)) first = first[0]; // net.connect passes normalized [options, cb]
	if (first !== null && typeof first === "object") {
		if (typeof first.path === "string") return `unix:${first.path}`;
		return `${first.host ?? "localhost"}:${first.port}`;
	}
	if (typeof first === "number" || /^\d+$/.test(String(first))) {
		const host = typeof args[1] === "string" ? args[1] : "localhost";
		return `${host}:${first}`;
	}
	return `unix:${String(first)}`;
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
	record("tcp", tcpTarget(args));
	return connect.apply(this, args);
};

const send = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function (...args) {
	const port = args.find((a, i) => i > 0 && typeof a === "number" && a > 0);
	const host = args.find((a, i) => i > 0 && typeof a === "string");
	record("udp", `${host ?? "?"}:${port ?? "?"}`);
	return send.apply(this, args);
};
const udpConnect = dgram.Socket.prototype.connect;
dgram.Socket.prototype.connect = function (port, address, ...rest) {
	record("udp", `${typeof address === "string" ? address : "localhost"}:${port}`);
	return udpConnect.call(this, port, address, ...rest);
};

const isLocalName = (host) => host === "localhost" || net.isIP(host) !== 0;
const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
	if (typeof host === "string" && !isLocalName(host)) record("dns", host);
	return lookup.call(this, host, ...rest);
};
const promisesLookup = dns.promises.lookup;
dns.promises.lookup = function (host, ...rest) {
	if (typeof host === "string" && !isLocalName(host)) record("dns", host);
	return promisesLookup.call(this, host, ...rest);
};
for (const name of ["resolve", "resolve4", "resolve6", "resolveAny", "resolveTxt", "resolveSrv"]) {
	const original = dns[name];
	if (typeof original !== "function") continue;
	dns[name] = function (host, ...rest) {
		record("dns", String(host));
		return original.call(this, host, ...rest);
	};
}
syncBuiltinESMExports();
