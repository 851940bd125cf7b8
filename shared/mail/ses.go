package mail

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
)

// SESClient is the part of the SES v2 client the transport uses.
type SESClient interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, opts ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// SES sends through Amazon SES (API v2, SendEmail with simple content: SES builds the MIME
// message). The sender's address or domain must be a verified identity of the account, and
// outside SES's sandbox the recipients need not be (docs/email.md).
type SES struct {
	Client SESClient
	// ConfigurationSet, when set, names the SES configuration set to send with (its event
	// destinations see bounces and complaints).
	ConfigurationSet string
}

// Send implements Transport.
func (s *SES) Send(ctx context.Context, m Message) error {
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(m.From),
		Destination:      &types.Destination{ToAddresses: []string{m.To}},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String(m.Subject), Charset: aws.String("UTF-8")},
			Body: &types.Body{
				Text: &types.Content{Data: aws.String(m.Text), Charset: aws.String("UTF-8")},
				Html: &types.Content{Data: aws.String(m.HTML), Charset: aws.String("UTF-8")},
			},
			Headers: []types.MessageHeader{{Name: aws.String("Auto-Submitted"), Value: aws.String("auto-generated")}},
		}},
	}
	if s.ConfigurationSet != "" {
		in.ConfigurationSetName = aws.String(s.ConfigurationSet)
	}
	if _, err := s.Client.SendEmail(ctx, in); err != nil {
		return fmt.Errorf("mail: SES SendEmail: %w", err)
	}
	return nil
}
