// A real Vercel AI SDK chat route, as a team would write it for `useChat`, on 127.0.0.1:$PORT.
//
// POST /api/chat       the body useChat sends ({id, messages: [UIMessage], trigger}); retrieves documents from
//                      the knowledge base below, streams the answer as a UI message stream: one source-document
//                      part per document, a data-sources part with their texts, then the model's parts.
// POST /api/chat-text  the same answer with no source parts: only what streamText itself sends.
// POST /api/chat-tools the same, with an order-lookup tool the model may call (`tool`, up to 3 steps): its
//                      tool-input and tool-output parts stream before the answer.
// GET  /healthz        200 once listening.
//
// The model is an OpenAI-compatible one at $LLM_BASE_URL (the tests' FakeOpenAI) with $LLM_API_KEY; nothing
// else is reached. tests/fakes/ai_sdk_server.py starts this file.
import http from 'node:http';

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  convertToModelMessages,
  createUIMessageStream,
  jsonSchema,
  pipeUIMessageStreamToResponse,
  stepCountIs,
  streamText,
  tool,
  toUIMessageStream,
} from 'ai';

// The documents of tests/fakes/hayhooks_app/support_rag, with titles.
const DOCUMENTS = [
  {
    id: 'refund-policy',
    title: 'Refund policy',
    text: 'Refunds are issued within 14 days of the return being received. The card is credited.',
  },
  {
    id: 'shipping-times',
    title: 'Shipping times',
    text: 'Standard shipping takes 3 to 5 business days. Express shipping takes 1 day.',
  },
  {
    id: 'warranty',
    title: 'Warranty',
    text: 'Every device has a two-year warranty. The warranty covers defects, not accidental damage.',
  },
  { id: '退款政策', title: '退款政策', text: '退款在收到退货后14天内处理。款项退回原支付卡。' },
];
const TOP_K = 2;
const STOPWORDS = new Set(
  'a an and are be can do does for from how i in is it long my of on or the to what when where which who why will with you your'.split(
    ' ',
  ),
);

// Words (lower-cased, a plural's s dropped, stopwords out) and, for Chinese, character bigrams.
function terms(text) {
  const out = [];
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (!STOPWORDS.has(word)) out.push(word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word);
  }
  for (const run of text.match(/[\u4e00-\u9fff]+/g) ?? []) {
    if (run.length === 1) out.push(run);
    for (let i = 0; i + 1 < run.length; i += 1) out.push(run.slice(i, i + 2));
  }
  return out;
}

const INDEX = DOCUMENTS.map((doc) => ({ doc, terms: terms(`${doc.title} ${doc.text}`) }));
const AVG_LEN = INDEX.reduce((sum, entry) => sum + entry.terms.length, 0) / INDEX.length;

// BM25 (k1 1.2, b 0.75): the TOP_K documents that share a term with the question, best first.
function retrieve(question) {
  const k1 = 1.2;
  const b = 0.75;
  const scored = INDEX.map(({ doc, terms: docTerms }) => {
    let score = 0;
    for (const term of new Set(terms(question))) {
      const tf = docTerms.filter((t) => t === term).length;
      if (tf === 0) continue;
      const df = INDEX.filter((entry) => entry.terms.includes(term)).length;
      const idf = Math.log(1 + (INDEX.length - df + 0.5) / (df + 0.5));
      score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * docTerms.length) / AVG_LEN));
    }
    return { doc, score };
  });
  return scored
    .filter((entry) => entry.score > 0)
    .sort((x, y) => y.score - x.score)
    .slice(0, TOP_K)
    .map((entry) => entry.doc);
}

// The lines answer_from_prompt (tests/fakes/hayhooks_server.py) reads: `[doc_id] text`, or `Documents: none`.
function instructions(documents) {
  const head = 'Answer the question from the documents only, citing the document id in brackets.\n';
  if (documents.length === 0) return `${head}Documents: none\n`;
  return `${head}Documents:\n${documents.map((doc) => `[${doc.id}] ${doc.text}\n`).join('')}`;
}

function lastUserText(messages) {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return (last?.parts ?? [])
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

const provider = createOpenAICompatible({
  name: 'llm',
  baseURL: process.env.LLM_BASE_URL,
  apiKey: process.env.LLM_API_KEY,
});
const model = provider.chatModel(process.env.LLM_MODEL ?? 'gpt-4o-mini');

async function answer(messages, documents) {
  return streamText({
    model,
    instructions: instructions(documents),
    messages: await convertToModelMessages(messages),
    // One model call per turn: the SDK's default (2 retries, after 2 s and 4 s) would only delay the same
    // error part.
    maxRetries: 0,
    onError: ({ error }) => console.error('streamText error:', error),
  });
}

async function chat(messages, response) {
  const documents = retrieve(lastUserText(messages));
  const result = await answer(messages, documents);
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      // As the SDK's docs do it: the message starts before the first part, so the model's stream sends no start.
      writer.write({ type: 'start' });
      for (const doc of documents) {
        writer.write({ type: 'source-document', sourceId: doc.id, title: doc.title, mediaType: 'text/plain' });
      }
      writer.write({ type: 'data-sources', data: { documents } });
      writer.merge(toUIMessageStream({ stream: result.stream, sendReasoning: true, sendStart: false }));
    },
  });
  await pipeUIMessageStreamToResponse({ response, stream });
}

async function chatText(messages, response) {
  const result = await answer(messages, retrieve(lastUserText(messages)));
  await pipeUIMessageStreamToResponse({ response, stream: toUIMessageStream({ stream: result.stream }) });
}

const ORDERS = { A123: 'A123 shipped on 3 March, arriving 5 March', A124: 'A124 was cancelled' };

const TOOLS = {
  lookup_order: tool({
    description: 'Look an order up by its id.',
    inputSchema: jsonSchema({
      type: 'object',
      properties: { order_id: { type: 'string' } },
      required: ['order_id'],
    }),
    execute: async ({ order_id: orderId }) => ORDERS[orderId] ?? `${orderId} not found`,
  }),
};

async function chatTools(messages, response) {
  const result = streamText({
    model,
    instructions: instructions(retrieve(lastUserText(messages))),
    messages: await convertToModelMessages(messages),
    tools: TOOLS,
    stopWhen: stepCountIs(3),
    maxRetries: 0,
    onError: ({ error }) => console.error('streamText error:', error),
  });
  await pipeUIMessageStreamToResponse({ response, stream: toUIMessageStream({ stream: result.stream }) });
}

const ROUTES = { '/api/chat': chat, '/api/chat-text': chatText, '/api/chat-tools': chatTools };

function sendJson(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function readJson(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf-8'));
}

const server = http.createServer(async (request, response) => {
  try {
    if (request.method === 'GET' && request.url === '/healthz') {
      sendJson(response, 200, { ok: true });
      return;
    }
    const route = ROUTES[request.url];
    if (request.method !== 'POST' || route === undefined) {
      sendJson(response, 404, { error: `no route ${request.method} ${request.url}` });
      return;
    }
    let body;
    try {
      body = await readJson(request);
    } catch {
      sendJson(response, 400, { error: 'the body is not JSON' });
      return;
    }
    if (!Array.isArray(body?.messages) || body.messages.length === 0) {
      sendJson(response, 400, { error: 'messages: a non-empty array of UI messages is required' });
      return;
    }
    await route(body.messages, response);
  } catch (error) {
    console.error('request failed:', error);
    if (!response.headersSent) sendJson(response, 500, { error: String(error?.message ?? error) });
    else response.end();
  }
});

const port = Number(process.env.PORT ?? 3000);
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
