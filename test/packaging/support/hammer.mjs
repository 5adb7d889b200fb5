// Fires concurrent POSTs at locked endpoints that all increment one shared counter, then checks the
// counter lost no update and every grant had its own fencing token.
// usage: node hammer.mjs <requests per url> <url> [<url> ...]   (the first url also answers GET)
const [perUrl, ...urls] = process.argv.slice(2);
const count = Number(perUrl);
if (!Number.isInteger(count) || count < 1 || urls.length === 0) {
  throw new Error('usage: node hammer.mjs <requests per url> <url> [<url> ...]');
}

async function call(url, method) {
  const response = await fetch(url, { method });
  const body = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${body}`);
  return JSON.parse(body);
}

const before = (await call(urls[0], 'GET')).value;
const requests = urls.flatMap((url) => Array.from({ length: count }, () => call(url, 'POST')));
const results = await Promise.all(requests);
const after = (await call(urls[0], 'GET')).value;

const expected = before + results.length;
const tokens = new Set(results.map((r) => r.fencingToken));
const problems = [];
if (after !== expected) problems.push(`counter is ${after}, expected ${expected}: ${expected - after} updates lost`);
if (tokens.size !== results.length) problems.push(`${results.length} grants but ${tokens.size} distinct fencing tokens`);
if (results.some((r) => typeof r.fencingToken !== 'string' || !/^\d{40}$/.test(r.fencingToken))) {
  problems.push(`a fencing token is not 40 digits: ${JSON.stringify(results.find((r) => !/^\d{40}$/.test(String(r.fencingToken))))}`);
}
if (problems.length > 0) {
  console.error(`FAIL: ${problems.join('; ')}`);
  process.exit(1);
}
console.log(`ok: ${results.length} concurrent locked increments over ${urls.length} endpoints, counter ${before} -> ${after}, ${tokens.size} distinct fencing tokens`);
