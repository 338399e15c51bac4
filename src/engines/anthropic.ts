/**
 * Anthropic Messages API: POST {base}/v1/messages (default base https://api.anthropic.com) with
 * `x-api-key: <key>` and `anthropic-version: 2023-06-01`.
 *
 * Request: {model, max_tokens, system: context?, messages: [{role: user, content: prompt}]}, plus the
 * server-side web search tool (`web_search_20250305`, with the user's approximate location) when the
 * catalogue marks the model `web_search`.
 * Answer: the `text` content blocks joined (with web search the answer is split into several text
 * blocks around its citations, so they are joined without separators). Citations: the URLs of the
 * text blocks' `citations` (web_search_result_location) in reading order, then the remaining
 * `web_search_tool_result` result URLs (sources the engine read). Tokens: usage.input_tokens / output_tokens.
 * Evidence: the search results are retrieved; the `server_tool_use` web_search inputs' `query` are the queries searched.
 */
import { type AttemptResult, createJsonEngine, DEFAULT_MAX_OUTPUT_TOKENS, joinUrl, type LiveEngine, type LiveEngineDeps } from './http';
import { asArray, asNumber, asString, contextInstruction, countryCode, get, isRecord, type Json, stringList, UrlList } from './parse';
import { type AnswerRequest, EngineError } from './port';
import type { Model } from '../domain/models';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
export const ANTHROPIC_WEB_SEARCH_TOOL = 'web_search_20250305';

export function anthropicBody(model: Model, req: AnswerRequest, maxTokens = DEFAULT_MAX_OUTPUT_TOKENS): Json {
  const body: Json = {
    model: model.provider_model,
    max_tokens: maxTokens,
    messages: [{ role: 'user', content: req.prompt }],
  };
  const context = contextInstruction(req);
  if (context) body.system = context;
  if (model.web_search) {
    const tool: Json = { type: ANTHROPIC_WEB_SEARCH_TOOL, name: 'web_search', max_uses: 5 };
    const loc = req.location;
    if (loc) {
      const user_location: Json = { type: 'approximate' };
      if (loc.city) user_location.city = loc.city;
      if (loc.region) user_location.region = loc.region;
      const country = countryCode(loc.country);
      if (country) user_location.country = country;
      if (Object.keys(user_location).length > 1) tool.user_location = user_location;
    }
    body.tools = [tool];
  }
  return body;
}

export function parseAnthropic(body: unknown): AttemptResult {
  const content = get(body, 'content');
  if (!Array.isArray(content)) throw new EngineError('bad_response', 'answer has no content array');
  const texts: string[] = [];
  const cited = new UrlList();
  const searched: unknown[] = [];
  const queries: unknown[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      texts.push(block.text);
      for (const c of asArray(block.citations)) cited.add(get(c, 'url'));
    } else if (block.type === 'server_tool_use' && block.name === 'web_search') {
      queries.push(get(block, 'input', 'query'));
    } else if (block.type === 'web_search_tool_result') {
      for (const r of asArray(block.content)) if (get(r, 'type') === 'web_search_result') searched.push(get(r, 'url'));
    }
  }
  if (texts.length === 0) {
    throw new EngineError('bad_response', `answer has no text block (stop_reason ${String(get(body, 'stop_reason') ?? 'unknown')})`);
  }
  const retrieved = new UrlList();
  for (const u of searched) {
    cited.add(u);
    retrieved.add(u);
  }
  return {
    text: texts.join(''),
    citations: cited.urls,
    products: [],
    input_tokens: asNumber(get(body, 'usage', 'input_tokens')),
    output_tokens: asNumber(get(body, 'usage', 'output_tokens')),
    provider_model: asString(get(body, 'model')),
    retrieved: retrieved.urls,
    search_queries: stringList(queries),
  };
}

export function createAnthropicEngine(deps: LiveEngineDeps): LiveEngine {
  const maxTokens = deps.options?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  return createJsonEngine(deps, {
    adapter: 'anthropic',
    defaultBase: ANTHROPIC_BASE_URL,
    call: (base, req) => ({
      url: joinUrl(base, 'v1/messages'),
      headers: { 'x-api-key': deps.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      body: anthropicBody(deps.model, req, maxTokens),
    }),
    parse: parseAnthropic,
  });
}
