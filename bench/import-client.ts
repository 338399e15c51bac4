/**
 * Child process of the answers benchmark: writes the dataset's answers (answers-data.ts) and POSTs them to
 * /api/v1/responses/import, `concurrency` requests at a time, so the generator and the HTTP client do not share
 * the server's event loop. Reports progress and the result over IPC.
 */
import { answerBatches, type DatasetShape, type SiteIds } from './answers-data';

interface Job {
  url: string;
  key: string;
  websiteId: string;
  shape: DatasetShape;
  ids: SiteIds;
  concurrency: number;
}

async function run(job: Job) {
  const batches = answerBatches(job.shape, job.ids);
  let imported = 0;
  let skipped = 0;
  let requests = 0;
  let done = false;
  const next = async () => {
    if (done) return null;
    const r = await batches.next();
    if (r.done) done = true;
    return r.done ? null : r.value;
  };
  // one generator shared by the senders: the next batch is written while the others are in flight
  let queue: Promise<unknown> = Promise.resolve();
  const take = () => {
    const p = queue.then(next);
    queue = p;
    return p;
  };
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      for (let batch = await take(); batch; batch = await take()) {
        const res = await fetch(`${job.url}/api/v1/responses/import`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': job.key },
          body: JSON.stringify({ website_id: job.websiteId, responses: batch }),
        });
        const body = (await res.json()) as { imported: number; skipped: number; error?: string };
        if (res.status !== 201) throw new Error(`import: ${res.status} ${body.error}`);
        imported += body.imported;
        skipped += body.skipped;
        requests++;
        if (requests % 20 === 0) process.send!({ progress: imported + skipped });
      }
    }),
  );
  return { imported, skipped, requests };
}

process.once('message', (job: Job) => {
  run(job).then(
    (r) => process.send!({ done: r }, () => process.exit(0)),
    (err) => process.send!({ error: err instanceof Error ? err.message : String(err) }, () => process.exit(1)),
  );
});
