package slack

import (
	"context"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// RunSocketMode takes Slack's interactivity and commands over Socket Mode (no public URL: the
// binary dials Slack) until ctx ends. client must carry the app-level token (xapp-…, with
// connections:write), slackapi.OptionAppLevelToken. Each envelope is acknowledged at once; a
// click's work happens after the ack, a command's answer rides on it.
func (b *Bot) RunSocketMode(ctx context.Context, client *slackapi.Client, opts ...socketmode.Option) error {
	sm := socketmode.New(client, opts...)
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case evt, ok := <-sm.Events:
			if !ok {
				return <-done
			}
			b.socketEvent(ctx, sm, evt)
		}
	}
}

func (b *Bot) socketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slackapi.InteractionCallback)
		if !ok || evt.Request == nil {
			return
		}
		if err := sm.Ack(*evt.Request); err != nil {
			b.logger().WarnContext(ctx, "slack: acknowledging an interaction", "err", err)
		}
		b.After(ctx, cb)
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slackapi.SlashCommand)
		if !ok || evt.Request == nil {
			return
		}
		text := b.Command(ctx, cmd)
		if err := sm.Ack(*evt.Request, map[string]string{"response_type": "ephemeral", "text": text}); err != nil {
			b.logger().WarnContext(ctx, "slack: acknowledging a command", "err", err)
		}
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth:
		b.logger().WarnContext(ctx, "slack: socket mode", "event", string(evt.Type), "data", evt.Data)
	case socketmode.EventTypeConnected:
		b.logger().InfoContext(ctx, "slack: connected over Socket Mode")
	}
}
