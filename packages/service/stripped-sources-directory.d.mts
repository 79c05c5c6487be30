/** Where the typescript-sources hook keeps each module's stripped text. */
export declare const strippedSourcesDirectory: URL
