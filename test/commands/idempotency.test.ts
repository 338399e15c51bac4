import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowanceStream, monthOf } from '../../commands/allowances/allowance';
import { decideReplay, fingerprintOf, idempotentResultId } from '../../commands/idempotency/idempotency';
import { PROBE_KEY_CONFLICT, type RequestProbe, requestProbe } from '../../commands/probe/request-probe';
import { conflict, type DomainError, isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import type { Runtime } from '../../src/runtime';
import { probeJob } from '../../src/workers/probe';
import { freshDatabase, type TestDatabase, twoInstanceStores } from '../support/db';
import { jobEnded, openJobRuntime } from '../support/jobs';
import { onPostgresServer } from '../support/suites';

const probe = (over: Partial<RequestProbe> = {}): RequestProbe => ({ website_id: null, steps: 1, step_ms: 0, fail_at_step: null, ...over });
const ALLOWANCE = { name: 'probe', limit: 100, on_failure: 'consumed' as const };
const ok = <T>(r: T | DomainError): T => {
  if (isDomainError(r)) throw new Error(`${r.kind}: ${r.message}`);
  return r;
};

describe('idempotency: the decision', () => {
  const admitted = { scope: 'probe', key: 'k', fingerprint: 'f1', result_id: 'r' };
  it('given no request with the key, then the request is admitted', () => expect(decideReplay(null, 'f1', 'msg')).toBe('admit'));
  it('given the key admitted the same input, then it is a replay', () => expect(decideReplay(admitted, 'f1', 'msg')).toBe('replay'));
  it("given the key admitted other input, then the area's 409", () => expect(decideReplay(admitted, 'f2', 'Reused')).toEqual(conflict('Reused')));
  it('fingerprints ignore key order and undefined fields, and tell values apart', () => {
    expect(fingerprintOf({ a: 1, b: { c: 'x', d: [1, 2] } })).toBe(fingerprintOf({ b: { d: [1, 2], c: 'x' }, a: 1, e: undefined }));
    expect(fingerprintOf({ a: 1 })).not.toBe(fingerprintOf({ a: 2 }));
    expect(fingerprintOf({ a: [1, 2] })).not.toBe(fingerprintOf({ a: [2, 1] }));
  });
  it('the result id is the key within its organization and scope', () => {
    const org = newId();
    expect(idempotentResultId(org, 'probe', 'k')).toBe(idempotentResultId(org, 'probe', 'k'));
    expect(idempotentResultId(org, 'probe', 'k')).not.toBe(idempotentResultId(newId(), 'probe', 'k'));
    expect(idempotentResultId(org, 'probe', 'k')).not.toBe(idempotentResultId(org, 'seo', 'k'));
  });
});

describe('idempotency: requests with an Idempotency-Key (one instance)', () => {
  let database: TestDatabase;
  let rt: Runtime;
  const org = newId();
  const ctx = () => ({ store: rt.store, organizationId: org, actor: SYSTEM_ACTOR });
  const reservations = async () =>
    (await rt.store.readStream(allowanceStream(org, 'probe', monthOf(new Date())))).filter((e) => e.type === 'AllowanceReserved').length;
  beforeAll(async () => {
    database = await freshDatabase();
    rt = await openJobRuntime(database, { specs: [probeJob()] });
  });
  afterAll(async () => {
    await rt?.close();
  });

  it('given a key that admitted a probe, when the same input comes again (while it runs, after it succeeded, after it failed), then the same probe answers and nothing is charged again', async () => {
    for (const input of [probe(), probe({ fail_at_step: 1 })]) {
      const key = newId();
      const first = ok(await requestProbe(ctx(), input, { idempotency_key: key, allowance: ALLOWANCE }));
      expect(first.replayed).toBe(false);
      const charged = await reservations();
      const again = ok(await requestProbe(ctx(), { ...input }, { idempotency_key: key, allowance: ALLOWANCE }));
      expect(again).toMatchObject({ job_id: first.job_id, replayed: true });
      await jobEnded(rt, first.job_id);
      const after = ok(await requestProbe(ctx(), input, { idempotency_key: key, allowance: ALLOWANCE }));
      expect(after).toMatchObject({ job_id: first.job_id, replayed: true });
      expect(await reservations()).toBe(charged);
      const stream = await rt.store.readStream(jobStream('probe', first.job_id));
      expect(stream.filter((e) => e.type === 'ProbeRequested')).toHaveLength(1);
      expect(stream[0]).toMatchObject({ type: 'RequestAdmitted', data: { scope: 'probe', key, result_id: first.job_id } });
    }
  });

  it('given a key that admitted a probe, when other input comes with it, then 409 with the area message and nothing is written; a new key makes a new probe', async () => {
    const key = newId();
    const first = ok(await requestProbe(ctx(), probe({ steps: 2 }), { idempotency_key: key }));
    // the probe runs meanwhile and appends its steps: the log's head is taken once it has ended (under a loaded CI run a
    // step landed between the head and the check)
    await jobEnded(rt, first.job_id);
    const head = await rt.store.lastPosition();
    expect(await requestProbe(ctx(), probe({ steps: 3 }), { idempotency_key: key })).toEqual(conflict(PROBE_KEY_CONFLICT));
    expect(await rt.store.lastPosition()).toEqual(head);
    const other = ok(await requestProbe(ctx(), probe({ steps: 2 }), { idempotency_key: newId() }));
    expect(other.job_id).not.toBe(first.job_id);
  });

  it('given a refused admission (allowance spent), then its key stays free: the same key admits once the allowance allows', async () => {
    const key = newId();
    const none = { ...ALLOWANCE, name: 'probe-none', limit: 0 };
    const refused = await requestProbe(ctx(), probe(), { idempotency_key: key, allowance: none });
    expect(refused).toEqual({ kind: 'forbidden', message: 'Probe allowance exhausted' });
    expect(await rt.store.readStream(jobStream('probe', idempotentResultId(org, 'probe', key)))).toHaveLength(0);
    const later = ok(await requestProbe(ctx(), probe(), { idempotency_key: key, allowance: { ...none, limit: 1 } }));
    expect(later.job_id).toBe(idempotentResultId(org, 'probe', key));
  });
});

const racing = onPostgresServer('idempotency races', 'two instances need a shared server');

racing('idempotency: concurrent requests with one key through two instances (real Postgres)', () => {
  const stores = twoInstanceStores();

  it('given 10 requests with one key and one input at once, then one probe is created, charged once, and every request answers its id', async () => {
    const org = newId();
    const key = newId();
    const out = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        requestProbe({ store: stores[i % 2], organizationId: org, actor: SYSTEM_ACTOR }, probe({ steps: 2 }), {
          idempotency_key: key,
          allowance: ALLOWANCE,
        }),
      ),
    );
    const ids = out.map((r) => ok(r).job_id);
    expect(new Set(ids).size).toBe(1);
    expect(out.filter((r) => !ok(r).replayed)).toHaveLength(1);
    const stream = await stores[0].readStream(jobStream('probe', ids[0]));
    expect(stream.map((e) => e.type)).toEqual(['RequestAdmitted', 'ProbeRequested']);
    const allowance = await stores[0].readStream(allowanceStream(org, 'probe', monthOf(new Date())));
    expect(allowance.map((e) => e.type)).toEqual(['AllowanceReserved']);
  });

  it('given 10 requests with one key and different inputs at once, then one input wins and the others get 409', async () => {
    const org = newId();
    const key = newId();
    const out = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        requestProbe({ store: stores[i % 2], organizationId: org, actor: SYSTEM_ACTOR }, probe({ steps: i + 1 }), { idempotency_key: key }),
      ),
    );
    const won = out.filter((r) => !isDomainError(r));
    expect(won).toHaveLength(1);
    expect(out.filter((r) => isDomainError(r))).toEqual(Array(9).fill(conflict(PROBE_KEY_CONFLICT)));
    const stream = await stores[0].readStream(jobStream('probe', idempotentResultId(org, 'probe', key)));
    expect(stream.map((e) => e.type)).toEqual(['RequestAdmitted', 'ProbeRequested']);
  });
});
