// Runs autocannon in a child process (off the server's event loop; inside a worker thread autocannon would not
// aggregate its result) and reports per-request latencies too (autocannon's summary has no p95).
import autocannon from 'autocannon';

const workerData = JSON.parse(process.argv[2]);
const parentPort = { postMessage: (m) => process.send(m, () => process.exit(0)) };

const lat = [];
const statuses = {};
const instance = autocannon(workerData, (err, result) => {
  if (err) {
    parentPort.postMessage({ error: String(err) });
    return;
  }
  lat.sort((a, b) => a - b);
  const q = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.round(p * (lat.length - 1)))] : NaN);
  parentPort.postMessage({
    rps: result.requests.total / (result.duration || workerData.duration),
    total: result.requests.total,
    duration: result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: q(0.5),
    p95: q(0.95),
    p99: q(0.99),
    statuses,
  });
});
instance.on('response', (_client, statusCode, _bytes, responseTime) => {
  lat.push(responseTime);
  statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
});
