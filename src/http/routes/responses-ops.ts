import { importResponses, type ImportResponses } from '../../../commands/responses/import-responses';
import { RUN_IN_PROGRESS } from '../../../commands/responses/run-slot';
import { SCHEDULE_NOT_FOUND, startRun } from '../../../commands/responses/start-run';
import { requireWebsite } from '../../../queries/access';
import { getSchedule } from '../../../queries/catalog/schedules';
import { resolveSelection } from '../../../queries/filters';
import { dateRange, importedExternalIds, listResponses, type Page } from '../../../queries/responses/list';
import { getRun, listRuns, runFinished, runView } from '../../../queries/responses/runs';
import { utcDay } from '../../domain/dates';
import { conflict, DomainErrorException, isDomainError, notFound } from '../../domain/errors';
import { scheduleValue, type SharedFilters } from '../../domain/filters';
import { readCheckpoint } from '../../eventstore/runner';
import { orFail } from '../route';
import { type Caller, commandContextOf, dbOf } from './caller';

export const RUN_NOT_FOUND = 'Run not found';

/** The answers area as REST routes and MCP tools both run it: access, command or query, read-your-writes, shape. */
export const responseOps = {
  /** Starts a run now: the active prompts x the schedule's models x the website's locations. */
  async startRun(c: Caller, input: { website_id: string; schedule_id?: string | null }) {
    const w = await requireWebsite(dbOf(c), c.principal, input.website_id);
    const scheduleId = input.schedule_id ?? null;
    const started = await startRun(
      commandContextOf(c, w.id),
      { website_id: w.id, schedule_id: scheduleId, trigger: 'manual', day: utcDay(new Date()) },
      { finished: (runId) => runFinished(dbOf(c), runId) },
    );
    if (isDomainError(started) && started.kind === 'conflict' && started.message === RUN_IN_PROGRESS) {
      // the run in progress as the listing shows it, once the read model has it
      const holder = started.details?.run as { run_id: string };
      const run = (await runView(dbOf(c), w.id, holder.run_id)) ?? { ...holder, status: 'running' as const };
      throw new DomainErrorException(conflict(RUN_IN_PROGRESS, { run }));
    }
    const r = orFail(started);
    // the caller follows the run at status_url: the runs read model
    await c.deps.rt.waitForReadModels(r.position, ['runs']);
    return {
      run_id: r.plan.run_id,
      status: 'running' as const,
      schedule: scheduleValue(r.plan.schedule_id),
      day: r.plan.day,
      models: r.plan.models,
      total: r.plan.total,
      status_url: `${c.deps.rt.config.publicBaseUrl}/api/v1/response-streaming/runs/${r.plan.run_id}?website_id=${w.id}`,
    };
  },

  async getRun(c: Caller, websiteId: string, runId: string) {
    const w = await requireWebsite(dbOf(c), c.principal, websiteId);
    const run = await getRun(dbOf(c), w.id, runId);
    if (!run) throw new DomainErrorException(notFound(RUN_NOT_FOUND));
    // a run read as finished has its answers (and, with the rules, their observations: recorded with each answer)
    // listed: those read models catch up with the runs checkpoint read after the run (read before it, the checkpoint
    // could predate the batch that finished the run)
    if (run.finished_at !== null) {
      const runs = await readCheckpoint(dbOf(c), 'runs');
      if (runs) await c.deps.rt.waitForReadModels(runs, ['answers', 'observations'], 2000);
    }
    return run;
  },

  async listRuns(c: Caller, websiteId: string, page: Page) {
    const w = await requireWebsite(dbOf(c), c.principal, websiteId);
    return listRuns(dbOf(c), w.id, page);
  },

  /** Answers newest first with what analysis derives from each; `prefix` names the filters object in messages. */
  async listResponses(c: Caller, websiteId: string, filters: SharedFilters, page: Page, prefix?: string) {
    const w = await requireWebsite(dbOf(c), c.principal, websiteId);
    const selection = await resolveSelection(dbOf(c), w.id, filters, { prefix });
    return listResponses(dbOf(c), selection, page);
  },

  /** Imports answers (all or none); a known external_id is a skip. */
  async importResponses(c: Caller, input: ImportResponses) {
    const w = await requireWebsite(dbOf(c), c.principal, input.website_id);
    const external = input.responses.flatMap((r) => (r.external_id === undefined ? [] : [r.external_id]));
    const known = await importedExternalIds(dbOf(c), w.id, external);
    const r = orFail(await importResponses(commandContextOf(c, w.id), w.id, input, known));
    // the caller reads the answers next (listing, metrics, a re-import's skips), and the observations it supplied
    const supplied = input.responses.some((x) => x.observations?.length);
    await c.deps.rt.waitForReadModels(r.position, supplied ? ['answers', 'observations'] : ['answers']);
    return r.result;
  },

  async dateRange(c: Caller, websiteId: string, scheduleId: string | null) {
    const w = await requireWebsite(dbOf(c), c.principal, websiteId);
    if (scheduleId !== null && !(await getSchedule(dbOf(c), w.id, scheduleId))) throw new DomainErrorException(notFound(SCHEDULE_NOT_FOUND));
    return dateRange(dbOf(c), w.id, scheduleId);
  },
};
