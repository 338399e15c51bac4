import { compilePitchReport, PITCH_ATTRIBUTES } from '../../commands/pitches/report';
import { creditsCharged } from '../domain/credits';
import { type EventData, type EventsOf, exhaustive, pitchEvents } from '../domain/events';
import { typesOf } from '../domain/event-lists';
import { deterministicId } from '../domain/ids';
import { domainOf } from '../domain/urls';
import { type AnswerResult, isEngineError } from '../engines/port';
import type { Engines } from '../engines/registry';
import { type Outbound, SafeFetchError, type SafeFetchErrorCode } from '../net/safe-fetch';
import type { JobSpec, StepEvent, StepOutcome } from './jobs';
import { nameFromDomain, parsePlanReply, planPrompt, readHomePage, simulatedPlan } from './pitch-research';
import { cutText } from '../domain/text';
import { mapLimit } from '../domain/map-limit';

/** The pitch's own events in its job stream. */
const PITCH_EVENT_TYPES = typesOf(pitchEvents);
type PitchEvent = EventsOf<typeof PITCH_EVENT_TYPES>;

export interface PitchState {
  requested: EventData<'PitchRequested'> | null;
  site: EventData<'PitchSiteResearched'> | null;
  plan: EventData<'PitchPlanWritten'> | null;
  answers: Map<string, EventData<'PitchAnswersRecorded'>['answers']>;
  compiled: boolean;
}

export interface PitchJobDeps {
  engines: Engines;
  outbound: Outbound;
}

/** Engine calls of one model's step at once. */
const ASK_CONCURRENCY = 5;
/** An answer's text is kept up to this many characters. */
const ANSWER_MAX = 20_000;

const failed = (error_kind: string, message: string): StepOutcome => ({ failed: { error_kind, message } });

/** An engine failure a retry may cure is thrown (the bus delivers the job again); any other fails the report. */
function engineFailure(err: unknown, what: string): StepOutcome {
  if (isEngineError(err) && !err.retryable) return failed('generation_failed', `${what}: ${err.message}`);
  throw err;
}

/**
 * The pitch report's job (docs/api/jobs-and-limits.md): research the home page through the safe fetcher, have the answer engine
 * write the plan (competitors, 20 discovery prompts), ask each of the report's models every prompt, then compile the
 * report with the shared analysis. Each step's events carry ids derived from the job and the step, so a redelivered
 * or resumed step appends nothing twice; a home page that cannot be read is noted and the report goes on from the bare
 * domain; an engine failing for good fails the report (its allowance stays consumed).
 */
export function pitchJob(deps: PitchJobDeps): JobSpec<PitchState, PitchEvent> {
  return {
    kind: 'pitch',
    aggregate: {
      types: PITCH_EVENT_TYPES,
      initial: () => ({ requested: null, site: null, plan: null, answers: new Map(), compiled: false }),
      evolve(s, e) {
        switch (e.type) {
          case 'PitchRequested':
            return { ...s, requested: e.data };
          case 'PitchSiteResearched':
            return { ...s, site: e.data };
          case 'PitchPlanWritten':
            return { ...s, plan: e.data };
          case 'PitchAnswersRecorded': {
            const answers = new Map(s.answers);
            answers.set(e.data.model, e.data.answers);
            return { ...s, answers };
          }
          case 'PitchReportCompiled':
            return { ...s, compiled: true };
          default:
            return exhaustive(e, s);
        }
      },
    },
    reservation: (s) => (s.requested?.allowance ? { allowance: s.requested.allowance.name, period: s.requested.allowance.period } : null),
    concurrency: 8,
    next(s) {
      const r = s.requested;
      if (!r) return null;
      if (!s.site) return { name: 'research', run: ({ attempt }) => research(deps, r, attempt) };
      const site = s.site;
      if (!s.plan) return { name: 'plan', run: () => plan(deps, r, site) };
      const p = s.plan;
      const model = r.models.find((m) => !s.answers.has(m));
      if (model) return { name: `answers-${model}`, run: () => ask(deps, r, site, p, model) };
      if (s.compiled) return null;
      return {
        name: 'report',
        async run() {
          const report = compilePitchReport({
            job_id: r.job_id,
            company_name: site.company_name,
            company_url: r.company_url,
            plan: p,
            answers: r.models.map((m) => ({ model: m, answers: s.answers.get(m) ?? [] })),
          });
          return { events: [{ type: 'PitchReportCompiled', data: { job_id: r.job_id, ...report } }], succeeded: true };
        },
      };
    },
  };
}

/** Deliveries a home page that times out or answers 5xx/429 is read on before the report goes on without it (the bus's backoff between). */
export const RESEARCH_ATTEMPTS = 3;

/** Why a home page could not be read, as the report's note says it. */
const UNREADABLE: Record<SafeFetchErrorCode, string> = {
  BAD_URL: 'its address is not valid',
  BLOCKED_ADDRESS: 'it is not on a public address',
  DNS_FAILURE: 'the domain does not resolve',
  TIMEOUT: 'it did not answer in time',
  TOO_MANY_REDIRECTS: 'it redirects too many times',
  BODY_TOO_LARGE: 'its page is too large',
  TLS_ERROR: 'its certificate could not be verified',
  CONNECTION_ERROR: 'the connection failed',
};

async function research(deps: PitchJobDeps, r: EventData<'PitchRequested'>, attempt: number): Promise<StepOutcome> {
  const base = deps.outbound.baseUrl?.(r.domain) ?? `https://${r.domain}`;
  /** a failure that may pass is tried again on a later delivery; after that, the report goes on from the bare domain with a note */
  const unreadable = (why: string, passing: boolean, finalUrl: string): StepOutcome => {
    if (passing && attempt < RESEARCH_ATTEMPTS) throw new Error(`the website could not be read (${why}); trying again`);
    const data = {
      job_id: r.job_id,
      company_name: nameFromDomain(r.domain),
      company_description: '',
      final_url: finalUrl,
      research_note: `The website could not be read: ${why}`,
    };
    return { events: [{ type: 'PitchSiteResearched', data }] };
  };
  let page: Awaited<ReturnType<Outbound['fetch']>>;
  try {
    page = await deps.outbound.fetch(`${base}/`, { timeoutMs: 10_000, maxBytes: 512 * 1024, headers: { accept: 'text/html' } });
  } catch (err) {
    if (err instanceof SafeFetchError) return unreadable(UNREADABLE[err.code], err.code === 'TIMEOUT' || err.code === 'CONNECTION_ERROR', `${base}/`);
    throw err;
  }
  if (page.status >= 400) return unreadable(`it answered HTTP ${page.status}`, page.status >= 500 || page.status === 429, page.finalUrl);
  const found = readHomePage(page.body, r.domain);
  return { events: [{ type: 'PitchSiteResearched', data: { job_id: r.job_id, ...found, final_url: page.finalUrl } }] };
}

async function plan(deps: PitchJobDeps, r: EventData<'PitchRequested'>, site: EventData<'PitchSiteResearched'>): Promise<StepOutcome> {
  const writer = r.models[0];
  let drafted = simulatedPlan(r.domain, site.company_name, site.company_description);
  const events: StepEvent[] = [];
  if (deps.engines.mode !== 'simulated') {
    let answer: AnswerResult;
    try {
      answer = await deps.engines.engineFor(writer).ask({
        model: writer,
        prompt: planPrompt({
          name: site.company_name,
          domain: r.domain,
          description: site.company_description,
          country: r.country,
          language: r.language,
        }),
        location: { country: r.country },
        day: new Date().toISOString().slice(0, 10),
      });
    } catch (err) {
      return engineFailure(err, 'The answer engine could not write the report plan');
    }
    const parsed = parsePlanReply(answer.text);
    if (!parsed) return failed('generation_failed', 'The answer engine did not return competitors and 20 prompts');
    drafted = parsed;
    events.push(creditsCharged({ kind: 'pitch', credits: answer.usage.credits, website_id: null, ref_id: r.job_id, step: 'plan', model: writer }));
  }
  const own = r.domain;
  const competitors = drafted.competitors
    .filter((c) => domainOf(c.url) !== own && c.name.toLowerCase() !== site.company_name.toLowerCase())
    .slice(0, 8)
    .map((c, i) => ({ id: deterministicId('pitch-competitor', r.job_id, String(i)), name: c.name, url: c.url }));
  return {
    events: [
      {
        type: 'PitchPlanWritten',
        data: {
          job_id: r.job_id,
          competitors,
          prompts: drafted.prompts.map((prompt, i) => ({ id: deterministicId('pitch-prompt', r.job_id, String(i)), prompt, type: 'discovery' })),
          attributes: PITCH_ATTRIBUTES.map((name) => ({ id: deterministicId('pitch-attribute', name), name })),
        },
      },
      ...events,
    ],
  };
}

async function ask(
  deps: PitchJobDeps,
  r: EventData<'PitchRequested'>,
  site: EventData<'PitchSiteResearched'>,
  p: EventData<'PitchPlanWritten'>,
  model: string,
): Promise<StepOutcome> {
  const engine = deps.engines.engineFor(model);
  const day = new Date().toISOString().slice(0, 10);
  const website = {
    brand: { name: site.company_name, domain: r.domain },
    competitors: p.competitors.map((c) => ({ name: c.name, domain: domainOf(c.url) ?? '', identifiers: [] })),
  };
  let results: AnswerResult[];
  try {
    results = await mapLimit(p.prompts, ASK_CONCURRENCY, (q) =>
      engine.ask({ model, prompt: q.prompt, location: { country: r.country }, website, day, seed: r.domain }),
    );
  } catch (err) {
    return engineFailure(err, `The answer engine ${model} failed`);
  }
  const credits = results.reduce((n, a) => n + a.usage.credits, 0);
  return {
    events: [
      {
        type: 'PitchAnswersRecorded',
        data: {
          job_id: r.job_id,
          model,
          answers: results.map((a, i) => ({ prompt_id: p.prompts[i].id, text: cutText(a.text, ANSWER_MAX), citations: a.citations.slice(0, 50) })),
        },
      },
      creditsCharged({ kind: 'pitch', credits, website_id: null, ref_id: r.job_id, step: `answers-${model}`, model }),
    ],
  };
}
