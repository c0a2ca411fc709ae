// Command resendenv is an application written for Resend, as its
// getting-started guide writes one: the SDK's NewClient and its default
// HTTP client, the key from RESEND_API_KEY, the API's address from
// RESEND_BASE_URL (which the SDK reads itself). TestResendGoSDKReadsRESEND_BASE_URL
// runs it against Mailroom; it prints the email's id.
package main

import (
	"fmt"
	"os"

	"github.com/resend/resend-go/v3"
)

func main() {
	c := resend.NewClient(os.Getenv("RESEND_API_KEY"))
	sent, err := c.Emails.Send(&resend.SendEmailRequest{
		From:    "orders@shop.example",
		To:      []string{"env@example.net"},
		Subject: "Set by RESEND_BASE_URL",
		Text:    "One setting.",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "send:", err)
		os.Exit(1)
	}
	fmt.Println(sent.Id)
}
