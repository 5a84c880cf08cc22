/**
 * Latency at a fixed offered rate, in its own process (bench/api.ts runs it as a child): requests leave on an even
 * schedule (rate per second over up to `connections` keep-alive sockets), and each latency is measured from the time
 * the request was DUE, so a server that falls behind is charged for the wait (no coordinated omission), in
 * microseconds. autocannon's `-R` sends every connection's share at the same instants (50 requests at once every
 * 50 ms at 1,000 rps over 50 connections), so its percentiles measure the place in that burst more than the server,
 * and it reports them in whole milliseconds.
 * The first second runs at the same rate as a warm-up (the client's 50 connections opened, its code compiled): p50
 * and p99 are the steady state after it, and p99Cold is the p99 of every request, the first second's included.
 *
 *   node --import tsx bench/paced.ts <url> <rate> <seconds> <connections> [headers as JSON]
 * Prints {"rps", "p50", "p99", "p99Cold", "errors"} (latencies in ms) on stdout.
 */
import http from 'node:http';

const [url, rateArg, secondsArg, connectionsArg, headersArg] = process.argv.slice(2);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(connectionsArg) });
const headers = headersArg ? (JSON.parse(headersArg) as Record<string, string>) : {};
const target = new URL(url!);

function send(due: number, done: (latencyMs: number, ok: boolean) => void): void {
  const req = http.request(target, { agent, headers }, (res) => {
    res.resume();
    res.on('end', () => done(performance.now() - due, res.statusCode === 200));
  });
  req.on('error', () => done(performance.now() - due, false));
  req.end();
}

const WARMUP_S = 1;

async function main() {
  const warmup = Math.round(rate * WARMUP_S);
  const total = warmup + Math.round(rate * seconds);
  const latencies: number[] = [];
  const warm: number[] = [];
  let errors = 0;
  let finished = 0;
  const start = performance.now() + 50;
  const all = new Promise<void>((resolve) => {
    const done = (index: number) => (ms: number, ok: boolean) => {
      if (index >= warmup) {
        latencies.push(ms);
        if (!ok) errors++;
      } else warm.push(ms);
      if (++finished === total) resolve();
    };
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && start + (next * 1000) / rate <= now) {
        send(start + (next * 1000) / rate, done(next));
        next++;
      }
      if (next < total) setTimeout(tick, Math.max(0, start + (next * 1000) / rate - performance.now()));
    };
    setTimeout(tick, 50);
  });
  await all;
  const elapsed = (performance.now() - start) / 1000 - WARMUP_S;
  const at = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
  const everyOne = [...warm, ...latencies].sort((a, b) => a - b);
  latencies.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ rps: latencies.length / elapsed, p50: at(latencies, 50), p99: at(latencies, 99), p99Cold: at(everyOne, 99), errors }));
  agent.destroy();
}

void main();
