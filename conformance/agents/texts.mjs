// Texts the JS agents send. run.mjs imports them for its expectations, so an
// agent and the scenario that checks it cannot drift apart.

/** js-streamer / js-streamer-grpc: the answer, streamed as artifact chunks. */
export function jsStreamerAnswer(userText) {
  return `JS streamer heard: ${userText}. This answer arrived in chunks.`;
}

/** js-chatter: incremental WORKING status texts, then the whole text again in COMPLETED. */
export const JS_CHATTER_PIECES = ['JS chatter ', 'says hello ', 'from Node.'];
export const JS_CHATTER_ANSWER = JS_CHATTER_PIECES.join('');

/** js-failer: the FAILED status message. */
export const JS_FAILER_ERROR = 'JS agent failed on purpose';

/** js-asker and js03-asker: the question (INPUT_REQUIRED) and the answer once a city arrives. */
export const JS_ASKER_QUESTION = 'Which city?';
/**
 * The JSON Schema of the answer, sent with the question as a data part marked
 * by mediaType AND metadata {mediaType} "application/schema+json" (v0.3 data
 * parts have no mediaType), the bridge's convention for an interrupt's responseSchema.
 */
export const SCHEMA_MEDIA_TYPE = 'application/schema+json';
export function jsCitySchema() {
  return { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
}
export function jsAskerAnswer(city) {
  return `JS forecast for ${city}: sunny.`;
}

/** js-counter: one chunk "<n> " every JS_COUNTER_TICK_MS, up to JS_COUNTER_COUNT. */
export const JS_COUNTER_COUNT = 100;
export const JS_COUNTER_TICK_MS = 100;

/**
 * js-quiet-approver: proposes booking_flight as an ADK long-running function
 * call and answers the decision without echoing a function_response.
 */
export const JS_APPROVER_TOOL = 'book_flight';
export const JS_APPROVER_QUESTION = 'JS agent: book LH123 to Lisbon for 2 passengers?';
export const JS_APPROVER_DENIED = 'JS agent: nothing booked.';
export function jsBookingArgs() {
  return { flight: 'LH123', to: 'Lisbon', passengers: 2 };
}
export function jsBookedAnswer(args) {
  return `JS agent booked ${args.flight} to ${args.to} for ${args.passengers} passengers.`;
}

/** js03-streamer: the v0.3 artifact streamer. */
export function js03StreamerAnswer(userText) {
  return `v0.3 streamer heard: ${userText}. Chunks from an old SDK.`;
}

/** splitWords cuts s into at most n pieces at word boundaries; joined they give s back. */
export function splitWords(s, n) {
  const words = s.split(/(?<= )/);
  const k = Math.min(n, words.length);
  const pieces = [];
  for (let i = 0; i < k; i++) {
    const lo = Math.floor((i * words.length) / k);
    const hi = Math.floor(((i + 1) * words.length) / k);
    pieces.push(words.slice(lo, hi).join(''));
  }
  return pieces;
}

/** cityFrom reads a city from a data payload {city} or from plain text. */
export function cityFrom(texts, datas) {
  for (const d of datas) {
    if (d && typeof d === 'object' && typeof d.city === 'string' && d.city.trim() !== '') {
      return d.city.trim();
    }
  }
  for (const d of datas) {
    // A resume payload may arrive as a bare string.
    if (typeof d === 'string' && d.trim() !== '') return d.trim();
  }
  const text = texts.join(' ').trim();
  // A bridge may forward a resume payload as JSON text.
  if (text.startsWith('{') || text.startsWith('"')) {
    try {
      const v = JSON.parse(text);
      if (typeof v === 'string' && v.trim() !== '') return v.trim();
      if (v && typeof v.city === 'string' && v.city.trim() !== '') return v.city.trim();
    } catch {
      // not JSON: plain text
    }
  }
  return text.replace(/[ .!?]+$/, '');
}
