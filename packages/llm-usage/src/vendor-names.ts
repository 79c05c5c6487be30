// One name per vendor, whichever library reported it: the well-known values of the OpenTelemetry
// GenAI attribute `gen_ai.provider.name` where there is one (openai, anthropic, aws.bedrock,
// azure.ai.openai, gcp.vertex_ai, mistral_ai, x_ai, …), else the reported name in lowercase.
// Libraries disagree on spelling: Langtrace sends "OpenAI" and "AWS Bedrock", OpenInference
// "mistralai" and "xai", the Vercel AI SDK "<provider>.<api>" such as "openai.chat" or
// "google.vertex.chat", the deprecated `gen_ai.system` "vertex_ai" and "az.ai.openai".

/** Reported name (lowercase) or its first dot-separated part(s) → canonical name; most specific first. */
const VENDOR_ALIASES: ReadonlyArray<readonly [string, string]> = [
  ['azure.ai.openai', 'azure.ai.openai'],
  ['azure.ai.inference', 'azure.ai.inference'],
  ['az.ai.openai', 'azure.ai.openai'],
  ['az.ai.inference', 'azure.ai.inference'],
  ['azure-openai', 'azure.ai.openai'],
  ['azure_openai', 'azure.ai.openai'],
  // Langtrace's and OpenInference's "azure" is Azure OpenAI reached through the openai client.
  ['azure', 'azure.ai.openai'],
  ['aws.bedrock', 'aws.bedrock'],
  ['amazon-bedrock', 'aws.bedrock'],
  ['aws_bedrock', 'aws.bedrock'],
  ['aws bedrock', 'aws.bedrock'],
  ['awsbedrock', 'aws.bedrock'],
  ['bedrock', 'aws.bedrock'],
  ['aws', 'aws.bedrock'],
  ['amazon', 'aws.bedrock'],
  ['gcp.vertex_ai', 'gcp.vertex_ai'],
  ['google.vertex', 'gcp.vertex_ai'],
  ['google-vertex', 'gcp.vertex_ai'],
  ['vertex_ai', 'gcp.vertex_ai'],
  ['vertexai', 'gcp.vertex_ai'],
  ['gcp.gemini', 'gcp.gemini'],
  ['google.generative-ai', 'gcp.gemini'],
  ['google_genai', 'gcp.gemini'],
  ['google-genai', 'gcp.gemini'],
  ['gemini', 'gcp.gemini'],
  ['gcp.gen_ai', 'gcp.gen_ai'],
  ['google', 'gcp.gen_ai'],
  ['ibm.watsonx.ai', 'ibm.watsonx.ai'],
  ['watsonx', 'ibm.watsonx.ai'],
  ['mistral_ai', 'mistral_ai'],
  ['mistralai', 'mistral_ai'],
  ['mistral', 'mistral_ai'],
  ['x_ai', 'x_ai'],
  ['x-ai', 'x_ai'],
  ['xai', 'x_ai'],
  ['openai', 'openai'],
  ['anthropic', 'anthropic'],
  ['cohere', 'cohere'],
  ['groq', 'groq'],
  ['deepseek', 'deepseek'],
  ['perplexity', 'perplexity'],
]

// The API part of a Vercel AI SDK provider name ("togetherai.chat"), dropped from unknown vendors.
const VERCEL_API_SUFFIX = /\.(chat|completion|responses|messages|embedding|textEmbedding|image|transcription|speech)$/i

// Spans report a handful of names, each on every span: an answer is worked out once per name (the
// alias scan showed in the writer's profile: docs/benchmarks.md#figures-behind-code-comments-2026-12-06),
// in a cache that is emptied when full.
const canonicalOf = new Map<string, string>()
const CACHED_NAMES_MAX = 1024

/** The canonical vendor name for a reported one (see the top of this file). */
export function canonicalVendor(reported: string): string {
  let canonical = canonicalOf.get(reported)
  if (canonical === undefined) {
    canonical = canonicalVendorOf(reported)
    if (canonicalOf.size >= CACHED_NAMES_MAX) canonicalOf.clear()
    canonicalOf.set(reported, canonical)
  }
  return canonical
}

function canonicalVendorOf(reported: string): string {
  const lower = reported.trim().toLowerCase()
  for (const [alias, canonical] of VENDOR_ALIASES) {
    if (lower === alias || lower.startsWith(`${alias}.`)) return canonical
  }
  return lower.replace(VERCEL_API_SUFFIX, '')
}

/** The documented aliases, for docs/semantic-conventions.md (checked by a test). */
export const vendorAliases = VENDOR_ALIASES
