// Driven by scripts/admin-browser-test.sh: the admin page in headless
// Chromium. Every step asserts; any failure exits non-zero.
import { createRequire } from "node:module";
import assert from "node:assert/strict";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH, "x.js"));
const { chromium } = require("playwright-core");

const BASE = process.env.BASE;
const ADMIN = `${BASE}/admin`;
const AUTH = { authorization: "Bearer operator-token" };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  headless: true,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
  ],
});
let failed = false;
try {
  // Without the operator's token: the application's auth refuses it all.
  const anon = await browser.newContext();
  for (const p of ["", "/state.json", "/rules.json"]) {
    const r = await anon.request.get(ADMIN + p);
    assert.equal(r.status(), 401, `anonymous GET /admin${p}`);
  }
  await anon.close();

  const ctx = await browser.newContext({
    extraHTTPHeaders: AUTH,
    viewport: { width: 1280, height: 900 },
  });
  // 127.0.0.1 only: anything else is aborted and fails the test.
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

  let res = await page.goto(ADMIN);
  assert.equal(res.status(), 200);
  assert.equal(await page.title(), "Rate limits");
  assert.match(await page.textContent("body"), /No rule would have limited a request/);

  // Traffic: two users over the login limit (penalty), two clients over
  // the log rule's limit on /search.
  const hit = async (p, method, headers) =>
    (await fetch(BASE + p, { method, headers })).status;
  const logins = async (user) => {
    const out = [];
    for (let i = 0; i < 7; i++) out.push(await hit("/login", "POST", { "x-user": user }));
    return out;
  };
  for (const user of ["alice", "bob"]) {
    const codes = await logins(user);
    assert.deepEqual(codes, [200, 200, 200, 200, 200, 429, 429], `logins of ${user}`);
  }
  for (const [client, n] of [["crawler-7", 25], ["crawler-9", 14]]) {
    for (let i = 0; i < n; i++) {
      assert.equal(await hit("/search", "GET", { "x-client": client }), 200, "log rule never blocks");
    }
  }

  await page.goto(ADMIN);
  const attention = page.locator("h2:has-text('Needs attention') + p + table");
  assert.match(await attention.textContent(), /search-shadow/);
  assert.equal(await attention.locator("code").count(), 3, "the rule and its two subjects");
  const penalties = page.locator("h2:has-text('Penalties in force') + table tr:has(button)");
  assert.equal(await penalties.count(), 2, "alice's and bob's penalties");

  // Lift the first penalty by clicking its button.
  const lifted = await penalties.first().locator("td").nth(2).textContent(); // the digest
  await Promise.all([page.waitForNavigation(), penalties.first().locator("button").click()]);
  assert.equal(new URL(page.url()).pathname, "/admin", "back on the page");
  assert.equal(await penalties.count(), 1, "one penalty left");
  const left = await page.locator("h2:has-text('Penalties in force') + table").textContent();
  assert.ok(!left.includes(lifted), "the lifted subject is gone from the penalties");
  const after = [await hit("/login", "POST", { "x-user": "alice" }), await hit("/login", "POST", { "x-user": "bob" })];
  assert.deepEqual([...after].sort(), [200, 429], `one user free, one still blocked: ${after}`);
  const stillBlocked = after[0] === 429 ? "alice" : "bob";

  // Flip the kill switch by clicking: the blocked user gets through.
  const row = page.locator("tr:has(code:text-is('disable_rate_limiting'))");
  await Promise.all([page.waitForNavigation(), row.locator("button").click()]);
  assert.equal(await row.locator("td").nth(1).textContent(), "ON");
  assert.equal(await hit("/login", "POST", { "x-user": stillBlocked }), 200, "switch on: logs only");

  // A POST without the CSRF token (the auth header alone) is refused.
  const forged = await ctx.request.post(`${ADMIN}/switch`, {
    form: { switch: "disable_rate_limiting", on: "false" },
  });
  assert.equal(forged.status(), 403, "no CSRF token");
  await page.reload();
  assert.equal(await row.locator("td").nth(1).textContent(), "ON", "unchanged");

  await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });

  // And off again.
  await Promise.all([page.waitForNavigation(), row.locator("button").click()]);
  assert.equal(await row.locator("td").nth(1).textContent(), "off");
  assert.equal(await hit("/login", "POST", { "x-user": stillBlocked }), 429, "switch off: blocked again");

  assert.deepEqual(offsite, [], "no request left 127.0.0.1");
  assert.deepEqual(errors, [], "no console errors");
  console.log("ok: auth, traffic, needs attention, lift, switch, CSRF refusal, screenshot");
} catch (e) {
  failed = true;
  console.error("FAIL:", e.message);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
