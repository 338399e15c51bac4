/**
 * Perplexity Sonar: POST {base}/chat/completions (default base https://api.perplexity.ai) with
 * `Authorization: Bearer <key>`, OpenAI's chat format. Sonar always searches the web.
 *
 * Request: {model, messages: [system context?, user prompt]}, plus
 * web_search_options.user_location {country (ISO alpha-2), region, city} when a location is given.
 * Answer: choices[0].message.content with any `<think>…</think>` reasoning removed (sonar-reasoning
 * models). Citations: the top-level `citations` URL array, then `search_results[].url` (the newer
 * field; same sources), once each; `search_results` are also the retrieved pages. Tokens: usage.prompt_tokens /
 * completion_tokens.
 */
import { type AttemptResult, createJsonEngine, joinUrl, type LiveEngine, type LiveEngineDeps } from './http';
import { chatBody, chatCompletionUsage, messageText } from './openai-compatible';
import { asArray, get, isRecord, type Json, locationParts, UrlList } from './parse';
import { type AnswerRequest, EngineError } from './port';
import type { Model } from '../domain/models';

export const PERPLEXITY_BASE_URL = 'https://api.perplexity.ai';

export function perplexityBody(model: Model, req: AnswerRequest): Json {
  const body = chatBody(model, req);
  const user_location = locationParts(req.location);
  if (Object.keys(user_location).length) body.web_search_options = { user_location };
  return body;
}

export function parsePerplexity(body: unknown): AttemptResult {
  const message = get(body, 'choices', 0, 'message');
  if (!isRecord(message)) throw new EngineError('bad_response', 'answer has no choices[0].message');
  const raw = messageText(message.content);
  if (raw === undefined) throw new EngineError('bad_response', 'answer has no text in choices[0].message');
  const text = raw.replace(/<think>[\s\S]*?<\/think>\s*/g, '');
  const citations = new UrlList();
  for (const c of asArray(get(body, 'citations'))) citations.add(isRecord(c) ? c.url : c);
  const retrieved = new UrlList();
  for (const r of asArray(get(body, 'search_results'))) {
    citations.add(get(r, 'url'));
    retrieved.add(get(r, 'url'));
  }
  return {
    text,
    citations: citations.urls,
    products: [],
    ...chatCompletionUsage(body),
    retrieved: retrieved.urls,
  };
}

export function createPerplexityEngine(deps: LiveEngineDeps): LiveEngine {
  return createJsonEngine(deps, {
    adapter: 'perplexity',
    defaultBase: PERPLEXITY_BASE_URL,
    call: (base, req) => ({
      url: joinUrl(base, 'chat/completions'),
      headers: { authorization: `Bearer ${deps.apiKey}` },
      body: perplexityBody(deps.model, req),
    }),
    parse: parsePerplexity,
  });
}
