// Driven by scripts/admin-browser-test.sh: the operator's workflow in
// headless Chromium across two instances (examples/admin_fleet.rs on one
// valkey-server) behind a round-robin proxy started here. Every step
// asserts; any failure exits non-zero.
import { createRequire } from "node:module";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH, "x.js"));
const { chromium } = require("playwright-core");

const UPSTREAMS = process.env.UPSTREAMS.split(",").map(Number);
const served = UPSTREAMS.map(() => 0);
const posts = UPSTREAMS.map(() => 0);
let next = 0;
// The round-robin proxy: each request to the next instance in turn.
const proxy = http.createServer((req, res) => {
  const i = next++ % UPSTREAMS.length;
  served[i]++;
  if (req.method === "POST") posts[i]++;
  const up = http.request(
    { host: "127.0.0.1", port: UPSTREAMS[i], method: req.method, path: req.url, headers: req.headers },
    (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); },
  );
  up.on("error", (e) => { res.writeHead(502); res.end(String(e)); });
  req.pipe(up);
});
await new Promise((ok) => proxy.listen(0, "127.0.0.1", ok));
const BASE = `http://127.0.0.1:${proxy.address().port}`;
const ADMIN = `${BASE}/admin`;
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run"],
});
let failed = false;
try {
  const ctx = await browser.newContext({
    extraHTTPHeaders: { authorization: "Bearer operator-token" },
    viewport: { width: 1280, height: 900 },
  });
  const offsite = [];
  await ctx.route("**/*", (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === "127.0.0.1") return route.continue();
    offsite.push(u.href);
    return route.abort();
  });
  const page = await ctx.newPage();
  const errors = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  const text = async (sel) => (await page.locator(sel).textContent()) ?? "";
  // The text of `sel` if the page has it now, else "": for the checks of
  // `until`, which reloads (text() would wait 30 s for an element that only
  // a later reload shows).
  const textNow = async (sel) => ((await page.locator(sel).count()) ? text(sel) : "");
  const submit = (button) => Promise.all([page.waitForNavigation(), button.click()]);
  // Reloads (each through the proxy, so either instance) until `ok`.
  const until = async (what, ok, ms = 15000) => {
    const end = Date.now() + ms;
    for (;;) {
      await page.goto(ADMIN);
      if (await ok()) return;
      if (Date.now() > end) assert.fail(`waited ${ms} ms for: ${what}`);
      await sleep(300);
    }
  };
  const hit = async (client, n) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      out.push((await fetch(`${BASE}/api`, { headers: { "x-client": client } })).status);
    }
    return out;
  };
  const rollout = () => text("#rollout tr:has(code:text-is('api')) td:nth-child(2)");
  const version = async () => Number((await text("#history tr:nth-child(2) td:first-child")).trim());

  await page.goto(ADMIN);
  assert.equal(await page.title(), "Rate limits");
  await until("both instances reporting", async () => (await page.locator("#instances tr").count()) === 3);

  // Draft: one rule through the form; the check says it lands in log.
  const rf = page.locator("#rule-form");
  await rf.locator("input[name=id]").fill("api");
  await rf.locator("input[name=expression]").fill('http.request.uri.path eq "/api"');
  await rf.locator("input[name=limit]").fill("5");
  await rf.locator("input[name=key]").fill("ip, header:x-client");
  await submit(rf.locator("button"));
  assert.match(await text("#check"), /Check: the set loads/);
  const draft = page.locator("form:has(textarea)");
  const drafted = JSON.parse(await draft.locator("textarea").inputValue());
  assert.deepEqual(drafted.map((r) => [r.id, r.action]), [["api", "log"]], "the form's rule, in log");
  await draft.locator("input[name=note]").fill("browser: api in log");
  await submit(draft.locator("button:has-text('Check')"));
  assert.match(await text("#check"), /Check: the set loads/);
  await submit(draft.locator("button:has-text('Publish')"));
  assert.equal(new URL(page.url()).pathname, "/admin", "back on the page");
  await until("version 1 on both instances", async () =>
    (await text("#instances")).match(/up to date/g)?.length === 2 && (await version()) === 1);
  assert.match(await rollout(), /\blog\b/);

  // Publish in log: nothing is blocked; the clients it would hit show.
  for (const [c, n] of [["crawler-7", 25], ["crawler-9", 14]]) {
    assert.ok((await hit(c, n)).every((s) => s === 200), "a log rule never blocks");
  }
  await until("the clients it would hit", async () =>
    (await textNow("h2:has-text('Needs attention') + p + table")).includes("header:x-client=crawler-7"));
  assert.match(await text("h2:has-text('Needs attention') + p + table"), /ip=127\.0\.0\.1, header:x-client=crawler-9/);

  // Canary at 50%, then block for everyone, then back to log.
  const row = () => page.locator("#rollout tr:has(code:text-is('api'))");
  await row().locator("input[name=percent]").fill("50");
  await submit(row().locator("button:has-text('Start canary')"));
  await until("the canary on the page", async () => /canary 50 %/.test(await rollout()));
  await sleep(2500); // guard ticks: no traffic, nothing to act on
  await until("the canary kept", async () => /canary 50 %/.test(await rollout()));
  await submit(row().locator("button:has-text('Block for everyone')"));
  await until("blocking", async () => /\bblock\b/.test(await rollout()) && !/canary/.test(await rollout()));
  const blocked = await hit("crawler-7", 3);
  assert.ok(blocked.every((s) => s === 429), `blocked for everyone: ${blocked}`);
  await submit(row().locator("button:has-text('Back to log')"));
  await until("back in log", async () => /\blog\b/.test(await rollout()));
  const versionBeforeGuard = await version();

  // A log phase with traffic, a canary, then the traffic changes: a flood
  // of new clients. The guard (every instance runs it) returns the rule.
  for (const [c, n] of [["crawler-7", 12], ["crawler-9", 12]]) await hit(c, n);
  await sleep(1500); // reports
  await page.goto(ADMIN);
  await row().locator("input[name=percent]").fill("50");
  await submit(row().locator("button:has-text('Start canary')"));
  await until("the second canary", async () => /canary 50 %/.test(await rollout()));
  let refused = 0;
  for (let i = 0; i < 30; i++) refused += (await hit(`flood-${i}`, 12)).filter((s) => s === 429).length;
  assert.ok(refused > 0, "the canary blocks some of the flood");
  await until("the guard returning the rule to log", async () =>
    /\blog\b/.test(await rollout()) && (await page.locator("#rolled-back").count()) === 1, 20000);
  assert.match(await text("#rolled-back"), /per minute/);
  assert.match(await text("#history tr:nth-child(2)"), /rollback guard: rule "api" returned to its previous version/);
  assert.ok((await version()) > versionBeforeGuard);
  await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });

  // Roll back to version 1 from the history.
  await submit(page.locator("#history button:has-text('Roll back to 1')"));
  await until("version 1's set again", async () => /rollback to version 1/.test(await text("#history tr:nth-child(2)")));

  // A POST without the CSRF token is refused.
  const forged = await ctx.request.post(`${ADMIN}/publish`, { form: { json: "[]", version: "1" } });
  assert.equal(forged.status(), 403, "no CSRF token");

  assert.ok(posts.every((n) => n > 0), `both instances served the forms' POSTs: ${posts}`);
  assert.deepEqual(offsite, [], "no request left 127.0.0.1");
  assert.deepEqual(errors, [], "no console errors");
  console.log(`ok: fleet workflow across ${UPSTREAMS.length} instances (requests ${served}, POSTs ${posts})`);
} catch (e) {
  failed = true;
  console.error("FAIL:", e.message);
} finally {
  await browser.close();
  proxy.close();
}
process.exit(failed ? 1 : 0);
