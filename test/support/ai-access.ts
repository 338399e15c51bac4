/**
 * Expectations shared by the AI access check's tests (the pure check in test/analysis and the HTTP route in
 * test/http): the flag maps of a report and the diagnostics keys it must carry, and a malformed robots.txt.
 */
import { ENGINE_IDS, type EngineId } from '../../src/analysis/ai-crawlers';

/** Every engine with both kinds set to `value`. */
export const flags = (value: boolean) => Object.fromEntries(ENGINE_IDS.map((id) => [id, { conversational: value, training: value }]));
/** Every engine with both kinds set to `base`, except the kinds named in `overrides`. */
export const withFlags = (base: boolean, overrides: Partial<Record<EngineId, { conversational?: boolean; training?: boolean }>>) => {
  const out = flags(base) as Record<EngineId, { conversational: boolean; training: boolean }>;
  for (const [id, o] of Object.entries(overrides)) Object.assign(out[id as EngineId], o);
  return out;
};

/** The keys of diagnostics.userAgentChecks: one per engine and User-Agent (`default` where none is documented), sorted. */
export const EXPECTED_KEYS = [
  'chatgpt.ChatGPT-User',
  'chatgpt.OAI-SearchBot',
  'chatgpt.GPTBot',
  'claude.Claude-User',
  'claude.Claude-SearchBot',
  'claude.ClaudeBot',
  'perplexity.Perplexity-User',
  'perplexity.PerplexityBot',
  'perplexity.default',
  'gemini.Googlebot',
  'copilot.bingbot',
  'copilot.default',
  'grok.default',
  'deepseek.default',
  'rufus.Amzn-SearchBot',
  'rufus.Amzn-User',
  'rufus.Amazonbot',
].sort();

/** A robots.txt that is mostly not robots.txt: HTML, lines without colons, control characters. */
export const MALFORMED_ROBOTS_TXT = [
  '<html><body>Oops, this is not robots.txt</body></html>',
  'User-agent GPTBot',
  'Disallow /',
  '\u0000\u0007\ufffd\ufffd',
  ':::',
  'Disallow: /private',
  'User-agent: *',
  'Disallow: /*.pdf$',
  'Allow /',
  'Crawl-delay: soon',
].join('\n');
