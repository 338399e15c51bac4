/**
 * Gemini API: POST {base}/v1beta/models/{model}:generateContent (default base
 * https://generativelanguage.googleapis.com) with the key in the `x-goog-api-key` header (never in
 * the URL, where it would reach logs).
 *
 * Request: {contents: [{role: user, parts: [{text: prompt}]}], systemInstruction: context?}, plus
 * tools: [{google_search: {}}] (grounding with Google Search) when the catalogue marks the model
 * `web_search`. The API takes no user location: the context text carries it.
 * Answer: candidates[0].content.parts[].text joined, thought parts left out. Citations:
 * candidates[0].groundingMetadata.groundingChunks[].web.uri in order (Google returns its
 * grounding-redirect URLs there; they are kept as given). A prompt blocked by safety
 * (promptFeedback.blockReason, no candidates) is `rejected`. Tokens: usageMetadata.promptTokenCount /
 * candidatesTokenCount + thoughtsTokenCount (thinking is billed as output). Evidence: the grounding chunks are
 * retrieved; groundingMetadata.webSearchQueries are the queries searched.
 */
import { type AttemptResult, createJsonEngine, joinUrl, type LiveEngine, type LiveEngineDeps } from './http';
import { asArray, asNumber, asString, contextInstruction, get, isRecord, type Json, stringList, UrlList } from './parse';
import { type AnswerRequest, EngineError } from './port';
import type { Model } from '../domain/models';

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

export function geminiPath(model: Model): string {
  return `v1beta/models/${encodeURIComponent(model.provider_model)}:generateContent`;
}

export function geminiBody(model: Model, req: AnswerRequest): Json {
  const body: Json = { contents: [{ role: 'user', parts: [{ text: req.prompt }] }] };
  const context = contextInstruction(req);
  if (context) body.systemInstruction = { parts: [{ text: context }] };
  if (model.web_search) body.tools = [{ google_search: {} }];
  return body;
}

export function parseGemini(body: unknown): AttemptResult {
  const candidates = get(body, 'candidates');
  if (!Array.isArray(candidates) || candidates.length === 0) {
    const blocked = asString(get(body, 'promptFeedback', 'blockReason'));
    if (blocked) throw new EngineError('rejected', `prompt blocked by the provider (${blocked})`);
    throw new EngineError('bad_response', 'answer has no candidates');
  }
  const candidate = candidates[0];
  const parts = get(candidate, 'content', 'parts');
  const texts = asArray(parts).filter((p): p is Json => isRecord(p) && typeof p.text === 'string' && p.thought !== true);
  if (texts.length === 0) {
    throw new EngineError('bad_response', `answer has no text (finishReason ${String(get(candidate, 'finishReason') ?? 'unknown')})`);
  }
  const citations = new UrlList();
  for (const chunk of asArray(get(candidate, 'groundingMetadata', 'groundingChunks'))) citations.add(get(chunk, 'web', 'uri'));
  // the grounding chunks are what it read; every one is cited, so they are the retrieved pages as well
  const search_queries = stringList(asArray(get(candidate, 'groundingMetadata', 'webSearchQueries')));
  const output = asNumber(get(body, 'usageMetadata', 'candidatesTokenCount'));
  const thoughts = asNumber(get(body, 'usageMetadata', 'thoughtsTokenCount'));
  return {
    text: texts.map((p) => p.text as string).join(''),
    citations: citations.urls,
    products: [],
    input_tokens: asNumber(get(body, 'usageMetadata', 'promptTokenCount')),
    output_tokens: output === undefined && thoughts === undefined ? undefined : (output ?? 0) + (thoughts ?? 0),
    provider_model: asString(get(body, 'modelVersion')),
    retrieved: citations.urls,
    search_queries,
  };
}

export function createGeminiEngine(deps: LiveEngineDeps): LiveEngine {
  return createJsonEngine(deps, {
    adapter: 'gemini',
    defaultBase: GEMINI_BASE_URL,
    call: (base, req) => ({
      url: joinUrl(base, geminiPath(deps.model)),
      headers: { 'x-goog-api-key': deps.apiKey },
      body: geminiBody(deps.model, req),
    }),
    parse: parseGemini,
  });
}
