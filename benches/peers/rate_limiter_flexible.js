#!/usr/bin/env node
// The peer of ratelimit-valkey's `valkey_path` bench: rate-limiter-flexible
// (RateLimiterRedis over ioredis) on the same valkey-server and workload.
//
// Two limiters per request, both asked at once (two `consume` calls, one
// EVALSHA each): `site` keyed on the client IP and `api` keyed on IP and
// user, limits high enough that every request is admitted; keys chosen
// uniformly from 100,000 IPs; 64 requests in flight. After a warm-up it
// resets the server's stats, measures for a fixed time, and reports
// requests/s, decisions/s (2 per request), the latency of a request (both
// consume calls) p50/p99, and the server's `usec_per_call` of EVALSHA. Every
// key is asked for once before the warm-up, as in `valkey_path`.
//
//   node rate_limiter_flexible.js --port 6379 [--secs 10] [--warmup 3]
//        [--concurrency 64] [--keys 100000] [--no-autopipelining] [--flush]
//
// Lines starting with RESULT / CPU are for benches/valkey_peers.sh.
'use strict';

const Redis = require('ioredis');
const { RateLimiterRedis } = require('rate-limiter-flexible');

function options(argv) {
  const o = {
    host: '127.0.0.1',
    port: 6379,
    secs: 10,
    warmup: 3,
    concurrency: 64,
    keys: 100000,
    autopipelining: true,
    flush: false,
  };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--host') o.host = next();
    else if (a === '--port') o.port = Number(next());
    else if (a === '--secs') o.secs = Number(next());
    else if (a === '--warmup') o.warmup = Number(next());
    else if (a === '--concurrency') o.concurrency = Number(next());
    else if (a === '--keys') o.keys = Number(next());
    else if (a === '--no-autopipelining') o.autopipelining = false;
    else if (a === '--flush') o.flush = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

function infoValue(info, name) {
  const line = info.split('\r\n').find((l) => l.startsWith(`${name}:`));
  return line ? Number(line.slice(name.length + 1)) : NaN;
}

function infoField(info, prefix, field) {
  const line = info.split('\r\n').find((l) => l.startsWith(prefix));
  if (!line) return NaN;
  const kv = line
    .slice(prefix.length)
    .split(',')
    .find((s) => s.startsWith(`${field}=`));
  return kv ? Number(kv.slice(field.length + 1)) : NaN;
}

async function serverCpu(admin) {
  const info = await admin.info('cpu');
  return infoValue(info, 'used_cpu_sys') + infoValue(info, 'used_cpu_user');
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length, Math.max(1, Math.ceil(sorted.length * p))) - 1;
  return sorted[i];
}

async function main() {
  const o = options(process.argv);
  const client = new Redis({
    host: o.host,
    port: o.port,
    enableAutoPipelining: o.autopipelining,
    maxRetriesPerRequest: 1,
  });
  const admin = new Redis({ host: o.host, port: o.port });
  if (o.flush) await admin.flushall('SYNC');

  // `site`: 1e9 per minute per IP; `api`: 1e6 per minute per (IP, user).
  const site = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: 'site',
    points: 1000000000,
    duration: 60,
  });
  const api = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: 'api',
    points: 1000000,
    duration: 60,
  });

  const ips = new Array(o.keys);
  const users = new Array(o.keys);
  for (let i = 0; i < o.keys; i++) {
    const n = 0x0a000000 | i;
    ips[i] = `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
    users[i] = `${ips[i]}:u${i}`;
  }

  // Once for every key, 64 at a time: the measurement sees the steady state
  // (every subject has its key) rather than key creation.
  const prefill = [];
  for (let w = 0; w < o.concurrency; w++) {
    prefill.push(
      (async () => {
        for (let i = w; i < o.keys; i += o.concurrency) {
          await Promise.all([site.consume(ips[i]), api.consume(users[i])]);
        }
      })(),
    );
  }
  await Promise.all(prefill);

  const start = performance.now();
  const measureFrom = start + o.warmup * 1000;
  const measureTo = measureFrom + o.secs * 1000;
  const latencies = [];
  let done = 0;
  let errors = 0;
  let firstError = null;

  async function worker() {
    for (;;) {
      const i = Math.floor(Math.random() * o.keys);
      const t0 = performance.now();
      if (t0 >= measureTo) return;
      let ok = true;
      try {
        await Promise.all([site.consume(ips[i]), api.consume(users[i])]);
      } catch (e) {
        ok = false;
        if (!firstError) firstError = e;
      }
      const t1 = performance.now();
      if (t0 >= measureFrom && t1 <= measureTo) {
        done++;
        latencies.push(t1 - t0);
        if (!ok) errors++;
      }
    }
  }

  const workers = [];
  for (let w = 0; w < o.concurrency; w++) workers.push(worker());

  const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, t - performance.now())));
  await sleepUntil(measureFrom);
  await admin.config('RESETSTAT');
  const cpu0 = process.cpuUsage();
  const scpu0 = await serverCpu(admin);
  await sleepUntil(measureTo);
  const cpu1 = process.cpuUsage(cpu0);
  const scpu1 = await serverCpu(admin);
  const stats = await admin.info('commandstats');
  await Promise.all(workers);

  latencies.sort((a, b) => a - b);
  const rps = done / o.secs;
  const p50 = percentile(latencies, 0.5) * 1000;
  const p99 = percentile(latencies, 0.99) * 1000;
  const clientCpu = (cpu1.user + cpu1.system) / 1e6 / o.secs;
  const serverCpuCores = (scpu1 - scpu0) / o.secs;
  const usec = infoField(stats, 'cmdstat_evalsha:', 'usec_per_call');
  const calls = infoField(stats, 'cmdstat_evalsha:', 'calls');
  const pipelining = o.autopipelining ? 'auto-pipelining' : 'no auto-pipelining';
  console.log(
    `rate-limiter-flexible (ioredis, ${pipelining}): ${o.concurrency} concurrent x 2 limiters ` +
      `over ${o.keys} keys: ${rps.toFixed(0)} requests/s = ${(2 * rps).toFixed(0)} decisions/s, ` +
      `p50 ${p50.toFixed(0)} us, p99 ${p99.toFixed(0)} us, ${errors} errors; ` +
      `client CPU ${clientCpu.toFixed(2)} cores, server CPU ${serverCpuCores.toFixed(2)} cores; ` +
      `EVALSHA ${usec} usec_per_call (${calls} calls)`,
  );
  if (firstError) console.error('first error:', firstError);
  console.log(
    `RESULT name=rate-limiter-flexible requests_per_s=${rps.toFixed(0)} ` +
      `decisions_per_s=${(2 * rps).toFixed(0)} p50_us=${p50.toFixed(0)} p99_us=${p99.toFixed(0)} ` +
      `errors=${errors} client_cpu=${clientCpu.toFixed(2)} server_cpu=${serverCpuCores.toFixed(2)}`,
  );
  console.log(`CPU algo=rate-limiter-flexible usec_per_call=${usec} calls=${calls}`);
  client.disconnect();
  admin.disconnect();
  if (errors > 0) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
