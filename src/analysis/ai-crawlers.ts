/** The AI crawler agent list (infra/ai-crawlers.json), loaded once and validated. */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

export const ENGINE_IDS = ['chatgpt', 'claude', 'perplexity', 'gemini', 'copilot', 'grok', 'deepseek', 'rufus'] as const;
export type EngineId = (typeof ENGINE_IDS)[number];
export const AGENT_KINDS = ['conversational', 'training'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

const Agent = z
  .object({
    /** robots.txt product token */
    token: z.string().regex(/^[A-Za-z0-9_-]+$/, 'a robots token is letters, digits, "-" and "_"'),
    /** User-Agent header sent by the agent; null for a robots-token-only agent */
    userAgent: z.string().min(1).nullable(),
    /** For a token-only agent: the token of the agent (same engine) whose fetches it governs */
    fetchedBy: z.string().optional(),
    purpose: z.string().min(1),
    note: z.string().optional(),
  })
  .strict()
  .refine((a) => a.userAgent !== null || a.fetchedBy !== undefined, {
    message: 'an agent without a userAgent must name the agent it is fetchedBy',
  });

const Kind = z
  .object({
    agents: z.array(Agent),
    undocumented: z.literal(true).optional(),
    note: z.string().min(1).optional(),
  })
  .strict()
  .refine((k) => (k.agents.length === 0) === (k.undocumented === true), {
    message: 'a kind is either undocumented with no agents, or lists its documented agents',
  })
  .refine((k) => k.undocumented !== true || k.note !== undefined, { message: 'an undocumented kind needs a note saying why' });

const Engine = z
  .object({
    name: z.string().min(1),
    vendor: z.string().min(1),
    source: z.string().min(1),
    conversational: Kind,
    training: Kind,
  })
  .strict()
  .superRefine((e, ctx) => {
    const all = [...e.conversational.agents, ...e.training.agents];
    const tokens = all.map((a) => a.token.toLowerCase());
    if (new Set(tokens).size !== tokens.length) ctx.addIssue({ code: 'custom', message: 'an agent token appears twice in one engine' });
    for (const a of all) {
      if (a.fetchedBy === undefined) continue;
      const by = all.find((b) => b.token === a.fetchedBy);
      if (!by || by.userAgent === null) {
        ctx.addIssue({ code: 'custom', message: `${a.token}.fetchedBy must name an agent of the same engine with a userAgent` });
      }
    }
  });

export const AiCrawlersSchema = z
  .object({
    version: z.literal(1),
    note: z.string().optional(),
    engines: z.object(Object.fromEntries(ENGINE_IDS.map((id) => [id, Engine])) as Record<EngineId, typeof Engine>).strict(),
  })
  .strict();

export type AiCrawlers = z.infer<typeof AiCrawlersSchema>;
export type CrawlerEngine = z.infer<typeof Engine>;
export type CrawlerAgent = z.infer<typeof Agent>;
export type CrawlerKind = z.infer<typeof Kind>;

export const AI_CRAWLERS_PATH = new URL('../../infra/ai-crawlers.json', import.meta.url);

/** Parses and validates an agent list; throws with every problem listed. */
export function parseAiCrawlers(json: unknown): AiCrawlers {
  const parsed = AiCrawlersSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`invalid AI crawler list: ${problems}`);
  }
  return parsed.data;
}

export function loadAiCrawlers(path: URL | string = AI_CRAWLERS_PATH): AiCrawlers {
  return parseAiCrawlers(JSON.parse(readFileSync(path, 'utf8')));
}

let cached: AiCrawlers | undefined;
/** The validated list from infra/ai-crawlers.json, read on first use. */
export function aiCrawlers(): AiCrawlers {
  cached ??= loadAiCrawlers();
  return cached;
}
