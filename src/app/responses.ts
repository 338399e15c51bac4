import * as importResponsesCommands from '../../commands/responses/import-responses';
import type { ImportResponses } from '../../commands/responses/import-responses';
import { RUN_IN_PROGRESS } from '../../commands/responses/run-slot';
import * as startRunCommands from '../../commands/responses/start-run';
import { SCHEDULE_NOT_FOUND, type StartRun } from '../../commands/responses/start-run';
import { getSchedule } from '../../queries/catalog/schedules';
import { resolveSelection } from '../../queries/filters';
import * as listQueries from '../../queries/responses/list';
import { importedExternalIds, type Page } from '../../queries/responses/list';
import * as runsQueries from '../../queries/responses/runs';
import { runFinished, runView } from '../../queries/responses/runs';
import { utcDay } from '../domain/dates';
import { conflict, DomainErrorException, isDomainError, notFound } from '../domain/errors';
import type { SharedFilters } from '../domain/filters';
import type { Need } from '../domain/principal';
import { readCheckpoint } from '../eventstore/runner';
import { type Caller, caughtUp, commandContextOf, dbOf, type Reads, settled, websiteFor, writeThenRead } from './context';

export const RUN_NOT_FOUND = 'Run not found';

/** Reading answers and runs; starting runs and importing answers changes what is measured. */
const VIEW: Need = { category: 'analytics', level: 'view' };
const RUN: Need = { category: 'prompts', level: 'edit' };
const IMPORT: Need = { category: 'analytics', level: 'edit' };

/** The answers area (REST routes and MCP tools both call it): access, command or query, read-your-writes, shape. */

/** Starts a run now: the active prompts x the schedule's models x the website's locations. */
export async function startRun(c: Caller, input: StartRun) {
  const w = await websiteFor(c, input.website_id, RUN);
  const scheduleId = input.schedule_id ?? null;
  const started = await startRunCommands.startRun(
    { ...commandContextOf(c, w.id), runFinished: (runId) => runFinished(dbOf(c), runId) },
    { website_id: w.id, schedule_id: scheduleId, trigger: 'manual', day: utcDay(new Date()) },
  );
  if (isDomainError(started) && started.kind === 'conflict' && started.message === RUN_IN_PROGRESS) {
    // the run in progress as the listing shows it, once the read model has it
    const holder = started.details?.run as { run_id: string };
    const inProgress = (await runView(dbOf(c), w.id, holder.run_id)) ?? { ...holder, status: 'running' as const };
    throw new DomainErrorException(conflict(RUN_IN_PROGRESS, { run: inProgress }));
  }
  // the caller follows the run at status_url: the runs read model
  const row = await writeThenRead(c, Promise.resolve(started), ['runs'], (r) => runView(dbOf(c), w.id, r.run_id));
  return {
    run_id: row.run_id,
    status: 'running' as const,
    schedule: row.schedule,
    day: row.day,
    models: row.models,
    total: row.total,
    status_url: `${c.deps.rt.config.publicBaseUrl}/api/v1/response-streaming/runs/${row.run_id}?website_id=${w.id}`,
  };
}

export async function getRun(c: Caller, websiteId: string, runId: string) {
  const w = await websiteFor(c, websiteId, VIEW);
  const found = await runsQueries.getRun(dbOf(c), w.id, runId);
  if (!found) throw new DomainErrorException(notFound(RUN_NOT_FOUND));
  // a run read as finished has its answers (and, with the rules, their observations: recorded with each answer)
  // listed: those read models catch up with the runs checkpoint read after the run (read before it, the checkpoint
  // could predate the batch that finished the run); still behind after the wait, the run reads as running
  if (found.finished_at !== null) {
    const runs = await readCheckpoint(dbOf(c), 'runs');
    if (runs && !(await caughtUp(c.deps, runs, ['answers', 'observations'], 2000)))
      return { ...found, status: 'running' as const, finished_at: null };
  }
  return found;
}

export async function listRuns(c: Caller, websiteId: string, page: Page) {
  const w = await websiteFor(c, websiteId, VIEW);
  return runsQueries.listRuns(dbOf(c), w.id, page);
}

/** Answers newest first with what analysis derives from each; `prefix` names the filters object in messages. */
export async function listResponses(c: Caller, websiteId: string, filters: SharedFilters, page: Page, prefix?: string) {
  const w = await websiteFor(c, websiteId, VIEW);
  const selection = await resolveSelection(dbOf(c), w.id, filters, { prefix });
  return listQueries.listResponses(dbOf(c), selection, page);
}

/** Imports answers (all or none); a known external_id is a skip. */
export async function importResponses(c: Caller, input: ImportResponses) {
  const w = await websiteFor(c, input.website_id, IMPORT);
  const external = input.responses.flatMap((r) => (r.external_id === undefined ? [] : [r.external_id]));
  const known = await importedExternalIds(dbOf(c), w.id, external);
  // the caller reads the answers next (listing, metrics, a re-import's skips), and the observations it supplied
  const supplied = input.responses.some((x) => x.observations?.length);
  // (and the content hub's citation figures, which count answers from its own read model)
  const reads: Reads = supplied ? ['answers', 'observations', 'content'] : ['answers', 'content'];
  return settled(
    c.deps,
    importResponsesCommands.importResponses(commandContextOf(c, w.id), { ...input, website_id: w.id, already_imported: known }),
    reads,
  );
}

export async function dateRange(c: Caller, websiteId: string, scheduleId: string | null) {
  const w = await websiteFor(c, websiteId, VIEW);
  if (scheduleId !== null && !(await getSchedule(dbOf(c), w.id, scheduleId))) throw new DomainErrorException(notFound(SCHEDULE_NOT_FOUND));
  return listQueries.dateRange(dbOf(c), w.id, scheduleId);
}
