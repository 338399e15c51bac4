import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Allowance,
  allowanceStream,
  decideReserve,
  decideSettle,
  monthOf,
  reserveAllowance,
  type Reserve,
} from '../../commands/allowances/allowance';
import { openReservations, settleOpenReservations } from '../../commands/allowances/reconcile';
import { foldEvents } from '../../commands/handle';
import { idempotentResultId } from '../../commands/idempotency/idempotency';
import { PROBE_ALLOWANCE_EXHAUSTED, type RequestProbe, requestProbe } from '../../commands/probe/request-probe';
import { type DomainError, forbidden, isDomainError, notFound } from '../../src/domain/errors';
import { type DomainEvent, SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import type { Runtime } from '../../src/runtime';
import { probeJob } from '../../src/workers/probe';
import { freshDatabase, type TestDatabase, twoInstanceStores } from '../support/db';
import { given } from '../support/given';
import { jobEnded, openJobRuntime } from '../support/jobs';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';

const EXHAUSTED = forbidden('Pitch allowance exhausted');
const reserve = (id: string, over: Partial<Reserve> = {}): Reserve => ({
  allowance: 'pitch',
  period: '2026-11',
  reservation_id: id,
  subject: `pitch-${id}`,
  limit: 2,
  on_failure: 'consumed',
  exhausted: EXHAUSTED,
  ...over,
});
const reserved = (id: string, on_failure: 'consumed' | 'released' = 'consumed'): DomainEvent => ({
  type: 'AllowanceReserved',
  data: { allowance: 'pitch', period: '2026-11', reservation_id: id, subject: `pitch-${id}`, amount: 1, limit: 2, on_failure },
});
const settled = (id: string, outcome: 'consumed' | 'released'): DomainEvent => ({
  type: 'AllowanceSettled',
  data: { allowance: 'pitch', period: '2026-11', reservation_id: id, outcome },
});
const settle = (id: string, ended: 'succeeded' | 'failed' | 'gone') => (s: Parameters<typeof decideSettle>[0]) =>
  decideSettle(s, { allowance: 'pitch', period: '2026-11', reservation_id: id, ended });

describe('allowance: the decisions', () => {
  it('given one of two used, when a job is admitted, then it is reserved', () => {
    given(Allowance, reserved('a'))
      .when((s) => decideReserve(s, reserve('b')))
      .then([reserved('b')]);
  });
  it('given two of two used (one reserved, one consumed), when a job is admitted, then the area refusal', () => {
    given(Allowance, reserved('a'), reserved('b'), settled('b', 'consumed'))
      .when((s) => decideReserve(s, reserve('c')))
      .then(EXHAUSTED);
  });
  it('given a reservation, when the same job is admitted again, then nothing more is reserved', () => {
    given(Allowance, reserved('a'), reserved('b'))
      .when((s) => decideReserve(s, reserve('a')))
      .then([]);
  });
  it('given a released reservation, then its place counts no more', () => {
    given(Allowance, reserved('a'), reserved('b'), settled('a', 'released'))
      .when((s) => decideReserve(s, reserve('c')))
      .then([reserved('c')]);
  });
  it('given a reservation kept on failure, when its job fails, then it is consumed; one released on failure is released', () => {
    given(Allowance, reserved('a'))
      .when(settle('a', 'failed'))
      .then([settled('a', 'consumed')]);
    given(Allowance, reserved('a', 'released'))
      .when(settle('a', 'failed'))
      .then([settled('a', 'released')]);
    given(Allowance, reserved('a', 'released'))
      .when(settle('a', 'succeeded'))
      .then([settled('a', 'consumed')]);
  });
  it('given a job that never came to be, then its reservation is released; a settled one is not settled again', () => {
    given(Allowance, reserved('a'))
      .when(settle('a', 'gone'))
      .then([settled('a', 'released')]);
    given(Allowance, reserved('a'), settled('a', 'consumed')).when(settle('a', 'gone')).then([]);
    given(Allowance).when(settle('a', 'failed')).then(notFound('Reservation not found'));
  });
  it('given a reservation an operator released (its job never came to be), when the job is admitted again, then it is reserved again, in a round of its own, and settles', () => {
    const again = given(Allowance, reserved('a'), settled('a', 'released')).when((s) => decideReserve(s, reserve('a')));
    again.then([reserved('a')]);
    // its events are not the first round's (an event store would take them for the same events)
    const first = decideReserve(Allowance.initial(), reserve('a'));
    const second = decideReserve(foldEvents(Allowance, [reserved('a'), settled('a', 'released')]), reserve('a'));
    if (isDomainError(first) || isDomainError(second)) throw new Error('refused');
    expect(second.events[0].id).not.toBe(first.events[0].id);
    const reReserved = foldEvents(Allowance, [reserved('a'), settled('a', 'released'), reserved('a')]);
    expect(reReserved.used).toBe(1);
    const s2 = settle('a', 'succeeded')(reReserved);
    const s1 = settle('a', 'succeeded')(foldEvents(Allowance, [reserved('a')]));
    if (isDomainError(s1) || isDomainError(s2)) throw new Error('refused');
    expect(s2.events).toEqual([expect.objectContaining(settled('a', 'consumed'))]);
    expect(s2.events[0].id).not.toBe(s1.events[0].id);
    // and the allowance's edge holds for it as for any job
    given(Allowance, reserved('a'), settled('a', 'released'), reserved('b'), reserved('c'))
      .when((s) => decideReserve(s, reserve('a')))
      .then(EXHAUSTED);
  });
  it('periods are UTC calendar months', () => {
    expect(monthOf(new Date('2026-11-30T23:59:59.999Z'))).toBe('2026-11');
    expect(monthOf(new Date('2026-12-01T00:00:00.000Z'))).toBe('2026-12');
  });
});

const probe = (over: Partial<RequestProbe> = {}): RequestProbe => ({ website_id: null, steps: 1, step_ms: 0, fail_at_step: null, ...over });

describe('allowance: reserved at admission, settled when the job ends', () => {
  let database: TestDatabase;
  let rt: Runtime;
  const org = newId();
  const ctx = () => ({ store: rt.store, organizationId: org, actor: SYSTEM_ACTOR });
  beforeAll(async () => {
    database = await freshDatabase();
    rt = await openJobRuntime(database, { specs: [probeJob()] });
  });
  afterAll(async () => {
    await rt?.close();
  });
  const rowOf = (name: string, id: string) =>
    until(`${id} settled`, async () => {
      const r = await rt.database.db('rm_allowance_reservations').where({ allowance: name, reservation_id: id }).first('state');
      return r && r.state !== 'reserved' ? (r.state as string) : undefined;
    });

  it('given a probe that succeeds and one that fails, then both stay consumed; with failures released, the failed one gives its place back', async () => {
    const keep = { name: 'probe-keep', limit: 5, on_failure: 'consumed' as const };
    const ok = await requestProbe(ctx(), probe(), { allowance: keep });
    const bad = await requestProbe(ctx(), probe({ fail_at_step: 1 }), { allowance: keep });
    if (isDomainError(ok) || isDomainError(bad)) throw new Error('refused');
    expect(await jobEnded(rt, ok.job_id)).toBe('succeeded');
    expect(await jobEnded(rt, bad.job_id)).toBe('failed');
    expect(await rowOf('probe-keep', ok.job_id)).toBe('consumed');
    expect(await rowOf('probe-keep', bad.job_id)).toBe('consumed');

    const giveBack = { name: 'probe-give-back', limit: 1, on_failure: 'released' as const };
    const failing = await requestProbe(ctx(), probe({ fail_at_step: 1 }), { allowance: giveBack });
    if (isDomainError(failing)) throw new Error('refused');
    expect(await requestProbe(ctx(), probe(), { allowance: giveBack })).toEqual(forbidden(PROBE_ALLOWANCE_EXHAUSTED));
    await jobEnded(rt, failing.job_id);
    expect(await rowOf('probe-give-back', failing.job_id)).toBe('released');
    expect(isDomainError(await requestProbe(ctx(), probe(), { allowance: giveBack }))).toBe(false);
  });

  it('given a keyed admission that died after reserving and an operator released its reservation, when the key is retried, then the job runs and its place is taken again (no free run)', async () => {
    const allowance = { name: 'probe-retried', limit: 1, on_failure: 'consumed' as const };
    const period = monthOf(new Date());
    // the admission's first step, as a process that died right after it left it: reserved, no job stream
    const jobId = idempotentResultId(org, 'probe', 'retried-key');
    const r = await reserveAllowance(
      ctx(),
      reserve(jobId, { allowance: allowance.name, period, subject: jobStream('probe', jobId), limit: allowance.limit }),
    );
    if (isDomainError(r)) throw new Error(r.message);
    await rt.waitForReadModels(r.position, ['allowances']);
    const open = await openReservations(rt.database.db, rt.store, { allowance: allowance.name, olderThanMs: 0 });
    expect(open.map((o) => [o.reservation_id, o.job])).toEqual([[jobId, 'gone']]);
    expect((await settleOpenReservations({ store: rt.store, actor: SYSTEM_ACTOR }, { open })).result).toEqual([
      { reservation_id: jobId, outcome: 'released' },
    ]);

    const retried = await requestProbe(ctx(), probe(), { idempotency_key: 'retried-key', allowance });
    if (isDomainError(retried)) throw new Error(retried.message);
    expect(retried.job_id).toBe(jobId);
    expect(await jobEnded(rt, jobId)).toBe('succeeded');
    expect(await rowOf(allowance.name, jobId)).toBe('consumed');
    // the month's only place is used: another job is refused
    expect(await requestProbe(ctx(), probe(), { idempotency_key: 'another-key', allowance })).toEqual(forbidden(PROBE_ALLOWANCE_EXHAUSTED));
    const stream = await rt.store.readStream(allowanceStream(org, allowance.name, period));
    expect(stream.map((e) => e.type)).toEqual(['AllowanceReserved', 'AllowanceSettled', 'AllowanceReserved', 'AllowanceSettled']);
  });

  it('given a reservation whose job never came to be, then the operator list shows it gone and settling releases it; an ended job is settled as it ended', async () => {
    const orphan = newId();
    const r = await reserveAllowance(
      ctx(),
      reserve(orphan, { allowance: 'probe-orphans', period: monthOf(new Date()), subject: jobStream('probe', orphan), limit: 5 }),
    );
    if (isDomainError(r)) throw new Error(r.message);
    await rt.waitForReadModels(r.position, ['allowances']);
    // not yet old enough to be listed
    expect(await openReservations(rt.database.db, rt.store, { allowance: 'probe-orphans' })).toEqual([]);
    const open = await openReservations(rt.database.db, rt.store, { allowance: 'probe-orphans', olderThanMs: 0 });
    expect(open).toEqual([
      expect.objectContaining({ organization_id: org, reservation_id: orphan, subject: jobStream('probe', orphan), amount: 1, job: 'gone' }),
    ]);
    expect((await settleOpenReservations({ store: rt.store, actor: SYSTEM_ACTOR }, { open })).result).toEqual([
      { reservation_id: orphan, outcome: 'released' },
    ]);
    const stream = await rt.store.readStream(allowanceStream(org, 'probe-orphans', monthOf(new Date())));
    expect(stream.map((e) => e.type)).toEqual(['AllowanceReserved', 'AllowanceSettled']);
    expect((await settleOpenReservations({ store: rt.store, actor: SYSTEM_ACTOR }, { open })).result).toEqual([]);

    // a job that failed while its own settlement was lost: consumed, as the job would have settled it
    const ended = newId();
    const r2 = await reserveAllowance(
      ctx(),
      reserve(ended, { allowance: 'probe-orphans', period: monthOf(new Date()), subject: jobStream('probe', ended), limit: 5 }),
    );
    if (isDomainError(r2)) throw new Error(r2.message);
    const metadata = {
      organization_id: org,
      website_id: null,
      actor: SYSTEM_ACTOR,
      correlation_id: ended,
      causation_id: null,
      time: new Date().toISOString(),
    };
    await rt.store.append(
      jobStream('probe', ended),
      [{ id: newId(), type: 'JobFailed', data: { job_id: ended, kind: 'probe', error_kind: 'x', message: 'x' }, metadata }],
      'no_stream',
    );
    await rt.waitForReadModels(r2.position, ['allowances']);
    const listed = await openReservations(rt.database.db, rt.store, { allowance: 'probe-orphans', olderThanMs: 0 });
    expect(listed.map((x) => [x.reservation_id, x.job])).toEqual([[ended, 'failed']]);
    expect((await settleOpenReservations({ store: rt.store, actor: SYSTEM_ACTOR }, { open: listed })).result).toEqual([
      { reservation_id: ended, outcome: 'consumed' },
    ]);
  });
});

const racing = onPostgresServer('allowance races', 'two instances need a shared server');

racing('allowance: admissions racing at its edge through two instances (real Postgres)', () => {
  const stores = twoInstanceStores();

  it('given an allowance of 5 with 2 used, when 12 admissions race, then exactly 3 are admitted and 9 refused', async () => {
    const org = newId();
    const allowance = { name: 'pitch', limit: 5, on_failure: 'consumed' as const };
    const ctx = (i: number) => ({ store: stores[i % 2], organizationId: org, actor: SYSTEM_ACTOR });
    for (let i = 0; i < 2; i++) expect(isDomainError(await requestProbe(ctx(i), probe(), { allowance }))).toBe(false);
    const out: (unknown | DomainError)[] = await Promise.all(
      Array.from({ length: 12 }, (_, i) => requestProbe(ctx(i), probe(), { idempotency_key: `k${i}`, allowance })),
    );
    expect(out.filter((r) => !isDomainError(r))).toHaveLength(3);
    expect(out.filter((r) => isDomainError(r))).toEqual(Array(9).fill(forbidden(PROBE_ALLOWANCE_EXHAUSTED)));
    const events = await stores[0].readStream(allowanceStream(org, 'pitch', monthOf(new Date())));
    expect(events.filter((e) => e.type === 'AllowanceReserved')).toHaveLength(5);
  });
});
