export { attributeText, plainValue, type AnyValue, type Attributes, type SpanEvent } from './any-value.ts'
export { contentText, conversationOf, messagesFromJson, type ChatMessage, type Conversation, type ToolCall } from './conversation.ts'
export { compileTemplate, extractVariables, fillTemplate, missingVariables, type CompiledTemplate } from './prompt-template.ts'
export { chatPromptMessages, inputText, promptMessages, variablesOfInput, variableText, type PromptMessage } from './prompt-messages.ts'
