/**
 * OpenAI Chat Completions, and every provider that speaks it at its own base_url (xAI, DeepSeek,
 * Mistral, Meta's Llama API): POST {base_url}/chat/completions with `Authorization: Bearer <key>`.
 *
 * Request: {model, messages: [system context?, user prompt]}, plus `web_search_options` (with the
 * user's approximate location) when the catalogue marks the model `web_search` (OpenAI's search models).
 * Answer: text from choices[0].message.content (a string, or text parts); a refusal's text when
 * there is no content. Citations: message.annotations[].url_citation.url in order, then a top-level
 * `citations` URL array where a provider adds one (xAI). Tokens: usage.prompt_tokens / completion_tokens.
 */
import { type AttemptResult, createJsonEngine, joinUrl, type LiveEngine, type LiveEngineDeps } from './http';
import { asArray, asNumber, asString, contextInstruction, get, isRecord, type Json, locationParts, UrlList } from './parse';
import { type AnswerRequest, EngineError } from './port';
import type { Model } from '../domain/models';

/** A chat completions body's head: the model, and the messages (the context as a system message when there is one, then the prompt). */
export function chatBody(model: Model, req: AnswerRequest): Json {
  const messages: Json[] = [];
  const context = contextInstruction(req);
  if (context) messages.push({ role: 'system', content: context });
  messages.push({ role: 'user', content: req.prompt });
  return { model: model.provider_model, messages };
}

export function openAiChatBody(model: Model, req: AnswerRequest): Json {
  const body = chatBody(model, req);
  if (model.web_search) {
    const approximate = locationParts(req.location);
    body.web_search_options = Object.keys(approximate).length ? { user_location: { type: 'approximate', approximate } } : {};
  }
  return body;
}

/** Text of a chat message's content: a string, or an array of parts of which the text ones count. */
export function messageText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.filter((p) => isRecord(p) && (p.type === 'text' || p.type === undefined) && typeof p.text === 'string');
    return parts.length ? parts.map((p) => (p as Json).text as string).join('') : undefined;
  }
  return undefined;
}

export function parseOpenAiChat(body: unknown): AttemptResult {
  const message = get(body, 'choices', 0, 'message');
  if (!isRecord(message)) throw new EngineError('bad_response', 'answer has no choices[0].message');
  const text = messageText(message.content) ?? asString(message.refusal);
  if (text === undefined) throw new EngineError('bad_response', 'answer has no text in choices[0].message');
  const citations = new UrlList();
  for (const a of asArray(message.annotations)) {
    if (isRecord(a) && a.type === 'url_citation') citations.add(get(a, 'url_citation', 'url') ?? a.url);
  }
  for (const c of asArray(get(body, 'citations'))) citations.add(isRecord(c) ? c.url : c);
  return {
    text,
    citations: citations.urls,
    products: [],
    ...chatCompletionUsage(body),
  };
}

/** Tokens and the model that answered, as a chat-completions answer reports them. */
export function chatCompletionUsage(body: unknown): Pick<AttemptResult, 'input_tokens' | 'output_tokens' | 'provider_model'> {
  return {
    input_tokens: asNumber(get(body, 'usage', 'prompt_tokens')),
    output_tokens: asNumber(get(body, 'usage', 'completion_tokens')),
    provider_model: asString(get(body, 'model')),
  };
}

export function createOpenAiCompatibleEngine(deps: LiveEngineDeps): LiveEngine {
  return createJsonEngine(deps, {
    adapter: 'openai-compatible',
    call: (base, req) => ({
      url: joinUrl(base, 'chat/completions'),
      headers: { authorization: `Bearer ${deps.apiKey}` },
      body: openAiChatBody(deps.model, req),
    }),
    parse: parseOpenAiChat,
  });
}
