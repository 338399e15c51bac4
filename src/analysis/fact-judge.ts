/** The live fact judge: the writer engine compares an answer's sentences about the brand with the approved facts. */
import type { ModelId } from '../domain/models';
import type { AnswerEngine } from '../engines/port';
import { type JudgedConflict, namesBrand, sentences } from './entity-quality';
import { parseJudgeReply } from './observation-judge';

export const FACT_JUDGE_HEAD = 'aivis fact judge:';

/** The prompt: numbered sentences naming the brand, numbered facts, a JSON array of contradictions asked back. */
export function factJudgePrompt(brand: string, about: readonly string[], facts: readonly { text: string }[]): string {
  return [
    FACT_JUDGE_HEAD,
    `Below are sentences an AI assistant wrote about the brand "${brand}", and the brand's approved facts. Find each sentence that states something the facts contradict (a different number, date, price, place or claim). Saying something the facts do not cover is not a contradiction.`,
    'Reply with a JSON array only, one object per contradiction: [{"sentence": <sentence number>, "fact": <fact number>}]. When there is none, reply [].',
    `SENTENCES\n${about.map((s, i) => `${i + 1}. ${s}`).join('\n')}`,
    `FACTS\n${facts.map((f, i) => `${i + 1}. ${f.text}`).join('\n')}`,
  ].join('\n\n');
}

/** The reply's contradictions: numbers in range only, one per fact (its first sentence); anything else is ignored. */
export function readFactJudgeReply(reply: string, about: readonly string[], facts: readonly { id: string }[]): JudgedConflict[] {
  const items = parseJudgeReply(reply) ?? [];
  const out = new Map<string, JudgedConflict>();
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    const s = Number((item as { sentence?: unknown }).sentence);
    const f = Number((item as { fact?: unknown }).fact);
    if (!Number.isInteger(s) || !Number.isInteger(f) || s < 1 || s > about.length || f < 1 || f > facts.length) continue;
    const fact = facts[f - 1];
    if (!out.has(fact.id)) out.set(fact.id, { fact_id: fact.id, excerpt: about[s - 1] });
  }
  return [...out.values()];
}

export interface FactJudgement {
  conflicts: JudgedConflict[];
  credits: number;
}

/**
 * Asks the engine about the answer's sentences naming the brand; null (no call, no credits) when none does or there
 * is no fact. An engine failure is thrown as the engine's EngineError.
 */
export async function judgeWithEngine(
  engine: AnswerEngine,
  model: ModelId,
  input: { text: string; brand: string; facts: readonly { id: string; text: string }[]; day: string },
): Promise<FactJudgement | null> {
  const about = sentences(input.text).filter((s) => namesBrand(s, [input.brand]));
  if (!about.length || !input.facts.length) return null;
  const r = await engine.ask({ model, prompt: factJudgePrompt(input.brand, about, input.facts), day: input.day });
  return { conflicts: readFactJudgeReply(r.text, about, input.facts), credits: r.usage.credits };
}
