// The framework agents' scripts and texts, shared by the agents (adk.mjs,
// mastra.mjs) and the scenario table (../scenarios.mjs), so an expected
// answer is written once.

export const adk = {
  /** script picks the scripted model's move from the user's text. */
  script(text) {
    if (/^fail\b/i.test(text)) return { error: { code: 'MODEL_OVERLOADED', message: 'The scripted model is overloaded; try again later.' } };
    if (/^weather\b/i.test(text)) return { call: { name: 'get_weather', args: { city: 'Paris' } } };
    if (/^book\b/i.test(text)) return { call: { name: 'book_trip', args: { destination: 'Lisbon', nights: 3 } } };
    return { say: adk.echo(text) };
  },
  echo: (text) => `ADK here. You said: ${text}. This answer streams in parts.`,
  weather: (city) => ({ city, forecast: 'sunny', celsius: 21 }),
  /** afterTool is the model's answer once a tool's response is in. */
  afterTool(name, response) {
    if (name === 'get_weather') return `It is ${response.forecast} in ${response.city}, ${response.celsius} degrees.`;
    if (name === 'book_trip') {
      if (response?.approved === false) return 'Understood, I did not book the trip.';
      const args = { destination: 'Lisbon', nights: 3, ...(response?.editedArgs ?? {}) };
      return `Booked ${args.nights} nights in ${args.destination}.`;
    }
    return `The tool ${name} answered ${JSON.stringify(response)}.`;
  },
};

export const mastra = {
  /** script picks the scripted model's move from the user's text and the earlier user texts (memory). */
  script(text, earlier = []) {
    if (/^fail\b/i.test(text)) return { error: 'The scripted provider is down (503).' };
    if (/^weather\b/i.test(text)) return { call: { name: 'get_weather', args: { city: 'Oslo' } } };
    if (/^book\b/i.test(text)) return { call: { name: 'book_trip', args: { destination: 'Rome', nights: 2 } } };
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
  weather: (city) => ({ city, forecast: 'snowy', celsius: -3 }),
  /** afterTool is the model's answer once a tool's result is in. */
  afterTool(name, output) {
    const value = output?.type === 'json' ? output.value : output?.value ?? output;
    if (name === 'get_weather') return `It is ${value.forecast} in ${value.city}, ${value.celsius} degrees.`;
    if (name === 'book_trip') {
      if (!value?.booked) return 'Understood, I did not book the trip.';
      return `Booked ${value.nights} nights in ${value.destination}.`;
    }
    return `The tool ${name} answered ${JSON.stringify(value)}.`;
  },
};
