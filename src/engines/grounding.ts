/**
 * The grounding part of a writer prompt: the brand's approved facts (the knowledge base) the content must rest on,
 * fenced as FACTS, one a line. No facts, no part.
 */
export const GROUNDING_INSTRUCTION =
  "Ground the content in the brand's approved facts below: state them accurately where they are relevant, never contradict them, and invent no other claims about the brand.";

export function groundingPart(facts: readonly string[] | undefined): string[] {
  if (!facts?.length) return [];
  return [`${GROUNDING_INSTRUCTION}\n<<<FACTS\n${facts.map((f) => `- ${f.replace(/\s+/g, ' ').trim()}`).join('\n')}\nFACTS>>>`];
}
