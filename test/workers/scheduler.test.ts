import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger';
import { dueSlot, schedulePass, scheduledRunId } from '../../src/workers/scheduler';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, finishedRun } from '../support/answers';
import { call, type TestServer, useServer } from '../support/server';

describe('when a schedule fires', () => {
  const daily = { frequency: 'daily' as const, starts_on: null, ends_on: null, anchor: '2026-01-01' };
  const weekly = { frequency: 'weekly' as const, starts_on: '2026-03-02', ends_on: '2026-03-20', anchor: '2026-01-01' };

  it('given a daily schedule, then every day of its window, bounds included', () => {
    expect(dueSlot(daily, '2026-03-05')).toBe('2026-03-05');
    const bounded = { ...daily, starts_on: '2026-03-02', ends_on: '2026-03-04' };
    expect(['2026-03-01', '2026-03-02', '2026-03-04', '2026-03-05'].map((d) => dueSlot(bounded, d))).toEqual([
      null,
      '2026-03-02',
      '2026-03-04',
      null,
    ]);
  });

  it('given a weekly schedule, then once a week counted from starts_on, the week start being the slot', () => {
    expect(['2026-03-01', '2026-03-02', '2026-03-08', '2026-03-09', '2026-03-15', '2026-03-20', '2026-03-21'].map((d) => dueSlot(weekly, d))).toEqual(
      [null, '2026-03-02', '2026-03-02', '2026-03-09', '2026-03-09', '2026-03-16', null],
    );
    // without starts_on, weeks count from the day it was created
    expect(dueSlot({ ...weekly, starts_on: null, ends_on: null, anchor: '2026-03-04' }, '2026-03-12')).toBe('2026-03-11');
  });
});

describe('scheduler passes', () => {
  let s: TestServer;
  let key: string;
  useServer(async (server) => {
    s = server;
    key = (await s.org('Scheduled')).key;
  });

  const deps = (day: string) => ({ store: s.rt.store, db: s.rt.database.db, logger: silentLogger(), now: () => new Date(`${day}T06:00:00Z`) });

  it('given two instances passing at once, then each due slot starts exactly one run, and a later pass starts none', async () => {
    const site = await buildSite(s, key);
    const idle = await buildSite(s, key, { prompts: [{ text: 'paused', status: 'paused' }] });
    const weekly = await call(s, 'POST', '/api/v1/prompt-schedules', {
      key,
      body: { website_id: site.id, name: 'W', models: [MODEL_IDS[1]], frequency: 'weekly', starts_on: '2026-03-02' },
    });
    const later = await call(s, 'POST', '/api/v1/prompt-schedules', {
      key,
      body: { website_id: site.id, name: 'L', models: [MODEL_IDS[1]], frequency: 'daily', starts_on: '2026-04-01' },
    });
    expect(weekly.status).toBe(201);

    const [a, b] = await Promise.all([schedulePass(deps('2026-03-03')), schedulePass(deps('2026-03-03'))]);
    const started = [...a, ...b];
    const expected = [scheduledRunId(site.id, 'default', '2026-03-03'), scheduledRunId(site.id, weekly.body.schedule.id, '2026-03-02')];
    expect(started.filter((id) => expected.includes(id)).sort()).toEqual([...expected].sort());
    expect(started.filter((id) => expected.includes(id))).toHaveLength(2);
    // not the paused-only website, not the schedule whose window has not begun
    expect(started).not.toContain(scheduledRunId(idle.id, 'default', '2026-03-03'));
    expect(started).not.toContain(scheduledRunId(site.id, later.body.schedule.id, '2026-03-03'));
    expect(await s.rt.waitForReadModels(await s.rt.store.lastPosition(), 'all', 60_000)).toBe(true);

    const runs = await s.rt.database.db('rm_runs').where('website_id', site.id).select('id', 'schedule_id', 'trigger', 'day');
    expect(runs).toHaveLength(2);
    expect(runs.every((r: { trigger: string; day: string }) => r.trigger === 'scheduled' && r.day === '2026-03-03')).toBe(true);
    for (const r of runs) await finishedRun(s, key, site.id, r.id);

    // the same day again, and later the same week: the weekly slot is taken, a new day is a new default slot
    expect((await schedulePass(deps('2026-03-03'))).filter((id) => expected.includes(id))).toEqual([]);
    const thursday = await schedulePass(deps('2026-03-05'));
    expect(thursday).toContain(scheduledRunId(site.id, 'default', '2026-03-05'));
    expect(thursday).not.toContain(scheduledRunId(site.id, weekly.body.schedule.id, '2026-03-02'));
  });
});
