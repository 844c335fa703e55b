/**
 * Scenes in the memory tools: memory_commit takes an optional `scene` (a scene key such as
 * `chan:qq/peer:group_1027`) and attaches the turn the facts came from to it; empty, the turn's
 * own scene is used (the one its channel, peer and words matched when it arrived). Only the
 * attachment is added: what memory_commit stores and answers is otherwise unchanged, plus the
 * `scene` it attached to.
 */
import type { ToolContext, ToolDefinition } from '../shared/tool.js';
import { optionalText, type ToolArgs } from '../shared/tool-args.js';

export interface SceneToolDeps {
  /** The scene of the turn being answered (by input id), if it has one. */
  turnScene: (inputId: string) => string | undefined;
  /** Attaches an event to an existing scene; false when the scene does not exist. */
  attach: (eventId: string, key: string) => boolean;
  /** False on channels whose scene policy is none. */
  sceneChannel: (channel: string) => boolean;
}

const SCENE_HINT = 'a scene key such as chan:qq/peer:group_1027, or leave it empty for the current turn';

/** The tools with memory_commit taught about scenes; every other tool as it was. */
export function withScenes(tools: ToolDefinition[], deps: SceneToolDeps): ToolDefinition[] {
  return tools.map((tool) => (tool.name === 'memory_commit' ? sceneCommit(tool, deps) : tool));
}

function sceneCommit(tool: ToolDefinition, deps: SceneToolDeps): ToolDefinition {
  const parameters = tool.parameters as { properties?: Record<string, unknown> };
  return {
    ...tool,
    parameters: {
      ...tool.parameters,
      properties: {
        ...parameters.properties,
        scene: {
          type: 'string',
          maxLength: 300,
          description: 'The scene the facts belong to (a scene key); empty: the current turn’s scene.',
        },
      },
    },
    execute: async (args: ToolArgs, context?: ToolContext) => {
      const { scene: _scene, ...rest } = args;
      // "" is the model's way of saying "no scene given": the turn's own.
      const blank = typeof args.scene === 'string' && args.scene.trim() === '';
      const named = blank ? undefined : optionalText(args, 'scene', SCENE_HINT, 300);
      const result = await tool.execute(rest, context as ToolContext);
      const inputId = context?.input_id ?? context?.task_id;
      if (!context || inputId === undefined || !deps.sceneChannel(context.channel)) return result;
      const key = named ?? deps.turnScene(inputId);
      if (key === undefined || !deps.attach(inputId, key)) return result;
      return result !== null && typeof result === 'object' && !Array.isArray(result) ? { ...result, scene: key } : result;
    },
  };
}
