// The conversation readers live in @tracewell/llm-messages: the control plane reads the same
// messages when it takes a dataset item from a span.
export { conversationOf, contentText, messagesFromJson, type ChatMessage, type Conversation, type ToolCall } from '@tracewell/llm-messages'
