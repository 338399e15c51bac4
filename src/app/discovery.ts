import { z } from 'zod';
import * as discoveryCommands from '../../commands/discovery/discovery';
import { acceptDiscoveredPrompts, type StartPromptDiscovery } from '../../commands/discovery/discovery';
import { getDiscoveryRun, listDiscoveryRuns } from '../../queries/discovery/runs';
import type { DiscoveryAcceptView, DiscoveryRunsView, DiscoveryRunView } from '../../queries/discovery/views';
import { DomainErrorException, invalid, notFound } from '../domain/errors';
import { Uuid } from '../domain/schemas';
import { type Caller, commandContextOf, dbOf, settled, websiteFor, writeThenRead } from './context';

/**
 * Prompt discovery (spec, Remote tool server; CONTRACT.md): runs as jobs that suggest prompts from the sources aivis
 * can serve from the website's own data, a history of runs, and accepting suggestions as prompts.
 */

const PROMPTS_EDIT = { category: 'prompts', level: 'edit' } as const;
const PROMPTS_VIEW = { category: 'prompts', level: 'view' } as const;
const RUN_NOT_FOUND = 'Prompt discovery run not found';

export const DiscoveryRunsQuery = z.strictObject({
  website_id: Uuid.describe('The website (brand) id'),
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be between 1 and 20')
    .max(20, 'must be between 1 and 20')
    .default(10)
    .describe('Runs to list, newest first: 1 to 20 (default 10)'),
});

export const AcceptDiscovered = z.strictObject({
  website_id: Uuid.optional().describe("The run's website (optional; another website answers 404)"),
  indices: z
    .array(z.number({ error: 'must be an array of integers' }).int('must be an array of integers').min(0, 'must be at least 0'), {
      error: 'must be an array of integers',
    })
    .min(1, 'must have at least 1 item')
    .max(100, 'must have at most 100 items')
    .refine((a) => new Set(a).size === a.length, 'must not repeat an index')
    .describe("Positions in the run's prompts (from 0) to make prompts of"),
});
export type AcceptDiscovered = z.output<typeof AcceptDiscovered>;

export async function startPromptDiscovery(c: Caller, input: StartPromptDiscovery): Promise<{ run: DiscoveryRunView }> {
  const site = await websiteFor(c, input.website_id, PROMPTS_EDIT);
  const run = await writeThenRead(
    c,
    discoveryCommands.startPromptDiscovery(commandContextOf(c, site.id), input),
    ['discovery'],
    async (r) => (await getDiscoveryRun(dbOf(c), c.principal.organizationId, r.run_id)) ?? undefined,
  );
  return { run };
}

export async function listPromptDiscoveryRuns(c: Caller, input: z.output<typeof DiscoveryRunsQuery>): Promise<DiscoveryRunsView> {
  const site = await websiteFor(c, input.website_id, PROMPTS_VIEW);
  return { runs: await listDiscoveryRuns(dbOf(c), c.principal.organizationId, site.id, input.limit) };
}

export async function acceptDiscovered(c: Caller, runId: string, input: AcceptDiscovered): Promise<DiscoveryAcceptView> {
  const run = await getDiscoveryRun(dbOf(c), c.principal.organizationId, runId);
  if (!run || (input.website_id !== undefined && input.website_id !== run.website_id)) throw new DomainErrorException(notFound(RUN_NOT_FOUND));
  await websiteFor(c, run.website_id, PROMPTS_EDIT);
  if (run.status !== 'succeeded') throw new DomainErrorException({ kind: 'conflict', message: 'The run has not finished' });
  const past = input.indices.find((i) => i >= run.prompts.length);
  if (past !== undefined) throw new DomainErrorException(invalid(`indices: ${past} is past the run's ${run.prompts.length} prompts`));
  const prompts = await settled(
    c.deps,
    acceptDiscoveredPrompts(
      commandContextOf(c, run.website_id),
      run,
      input.indices.map((index) => ({ index, text: run.prompts[index].text, topic: run.prompts[index].topic })),
    ),
    ['catalog', 'discovery'],
  );
  return { run_id: run.run_id, prompts };
}
