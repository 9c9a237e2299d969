// The framework agents' scripts and texts, shared by the agents (adk.mjs,
// mastra.mjs) and the scenario table (../scenarios.mjs), so an expected
// answer is written once.

export const adk = {
  /** script picks the scripted model's move from the user's text. */
  script(text) {
    if (/^fail\b/i.test(text)) return { error: { code: 'MODEL_OVERLOADED', message: 'The scripted model is overloaded; try again later.' } };
    if (/^weather\b/i.test(text)) return { call: { name: 'get_weather', args: { city: 'Paris' } } };
    if (/^book\b/i.test(text)) return { call: { name: 'book_trip', args: adk.bookingArgs() } };
    return { say: adk.echo(text) };
  },
  echo: (text) => `ADK here. You said: ${text}. This answer streams in parts.`,
  weather: (city) => ({ city, forecast: 'sunny', celsius: 21 }),
  /** afterTool is the model's answer once a tool's response is in. */
  afterTool(name, response) {
    if (name === 'get_weather') return `It is ${response.forecast} in ${response.city}, ${response.celsius} degrees.`;
    if (name === 'book_trip') {
      if (response?.approved !== true) return adk.denied;
      // The bridge answers {approved, args} (args: the approved or edited
      // arguments, in full); a hand-written client may send editedArgs.
      const args = { ...adk.bookingArgs(), ...(response.args ?? {}), ...(response.editedArgs ?? {}) };
      return adk.booked(args);
    }
    return `The tool ${name} answered ${JSON.stringify(response)}.`;
  },
  bookingArgs: () => ({ destination: 'Lisbon', nights: 3 }),
  booked: (args) => `Booked ${args.nights} nights in ${args.destination}.`,
  denied: 'Understood, I did not book the trip.',
};

export const mastra = {
  /** script picks the scripted model's move from the user's text and the earlier user texts (memory). */
  script(text, earlier = []) {
    if (/^fail\b/i.test(text)) return { error: 'The scripted provider is down (503).' };
    if (/^weather\b/i.test(text)) return { call: { name: 'get_weather', args: { city: 'Oslo' } } };
    if (/^book\b/i.test(text)) return { call: { name: 'book_trip', args: mastra.bookingArgs() } };
    const named = /^my name is (\w+)/i.exec(text);
    if (named) return { say: mastra.greet(named[1]) };
    if (/^what is my name\??$/i.test(text)) {
      const told = earlier.map((t) => /^my name is (\w+)/i.exec(t)).filter(Boolean).pop();
      return { say: told ? mastra.recall(told[1]) : mastra.forgot };
    }
    return { say: mastra.echo(text) };
  },
  echo: (text) => `Mastra here. You said: ${text}. This answer streams in parts.`,
  greet: (name) => `Nice to meet you, ${name}.`,
  recall: (name) => `Your name is ${name}.`,
  forgot: 'I do not know your name.',
  bookQuestion: 'Book 2 nights in Rome?',
  bookingArgs: () => ({ destination: 'Rome', nights: 2 }),
  booked: (args) => `Booked ${args.nights} nights in ${args.destination}.`,
  denied: 'Understood, I did not book the trip.',
  /** The JSON Schema Mastra derives from book_trip's resumeSchema (zod), as it sends it (a string). */
  resumeSchema: () => ({
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      approved: { type: 'boolean' },
      editedArgs: { type: 'object', properties: { destination: { type: 'string' }, nights: { type: 'number' } }, additionalProperties: false },
    },
    required: ['approved'],
    additionalProperties: false,
  }),
  weather: (city) => ({ city, forecast: 'snowy', celsius: -3 }),
  /** afterTool is the model's answer once a tool's result is in. */
  afterTool(name, output) {
    const value = output?.type === 'json' ? output.value : output?.value ?? output;
    if (name === 'get_weather') return `It is ${value.forecast} in ${value.city}, ${value.celsius} degrees.`;
    if (name === 'book_trip') return value?.booked ? mastra.booked(value) : mastra.denied;
    return `The tool ${name} answered ${JSON.stringify(value)}.`;
  },
};
