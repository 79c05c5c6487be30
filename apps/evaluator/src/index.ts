export { buildApp, evaluatorService, type EvaluatorDeps } from './app.ts'
export { evaluatorPlugin, type EvaluatorPluginOptions } from './evaluator.plugin.ts'
export { evaluatorOptionsFromSettings } from './settings.ts'
export { evalScoreId } from './evaluation.processor.ts'
