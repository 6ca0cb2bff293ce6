package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math"
	"time"

	"github.com/mcpmw/mcpmw"
)

// The fixture tools, named and shaped as the conformance suite's scenarios
// expect (tools-*, server-stateless, json-schema-2020-12, the header
// scenarios). Every tool needs the capability "test", which anyone has.
const testCap mcpmw.Permission = "test"

// stepDelay separates the progress and log notifications of one call, so
// that the client sees them arrive while the tool runs.
const stepDelay = 50 * time.Millisecond

// tools returns the fixtures in the order tools/list shows them.
// http-header-validation calls the first listed tool with {}, so
// test_simple_text, which takes no arguments, comes first.
func tools() []mcpmw.Tool {
	return []mcpmw.Tool{
		{
			Name: "test_simple_text", Description: "Returns one text block.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("This is a simple text response for testing."), nil
			},
		},
		{
			Name: "test_image_content", Description: "Returns one image block: a 1x1 red PNG.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{Content: []mcpmw.Content{mcpmw.ImageContent(redPixelPNG, "image/png")}}, nil
			},
		},
		{
			Name: "test_audio_content", Description: "Returns one audio block: 10 ms of a 440 Hz tone as WAV.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{Content: []mcpmw.Content{mcpmw.AudioContent(toneWAV, "audio/wav")}}, nil
			},
		},
		{
			Name: "test_embedded_resource", Description: "Returns one embedded text resource.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{Content: []mcpmw.Content{
					mcpmw.EmbeddedResource("test://embedded-resource", "text/plain", "This is an embedded resource content.", nil),
				}}, nil
			},
		},
		{
			Name: "test_multiple_content_types", Description: "Returns a text, an image and an embedded resource block.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{Content: []mcpmw.Content{
					mcpmw.TextContent("Multiple content types test:"),
					mcpmw.ImageContent(redPixelPNG, "image/png"),
					mcpmw.EmbeddedResource("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`, nil),
				}}, nil
			},
		},
		{
			Name: "test_error_handling", Description: "Always fails, with an isError result the model can read.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ErrorResult("This tool intentionally returns an error for testing"), nil
			},
		},
		{
			Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100, 50 ms apart, when the client sent a progress token.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						if err := sleep(ctx, stepDelay); err != nil {
							return mcpmw.ToolResult{}, err
						}
					}
					if err := mcpmw.Progress(ctx, p, 100, "Completed step "+formatFloat(p)+" of 100"); err != nil {
						return mcpmw.ToolResult{}, err
					}
				}
				return mcpmw.TextResult("Progress reported: 0, 50 and 100 of 100."), nil
			},
		},
		{
			Name: "test_tool_with_logging", Description: "Sends three info log messages, 50 ms apart, to clients that take log messages.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						if err := sleep(ctx, stepDelay); err != nil {
							return mcpmw.ToolResult{}, err
						}
					}
					if err := mcpmw.Log(ctx, mcpmw.LogInfo, "conformance", msg); err != nil {
						return mcpmw.ToolResult{}, err
					}
				}
				return mcpmw.TextResult("Tool with logging executed successfully"), nil
			},
		},
		{
			Name: "test_logging_tool", Description: "Sends an info log message; on 2026-07-28 only a request that set a log level receives it.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				if err := mcpmw.Log(ctx, mcpmw.LogInfo, "conformance", "test log emission"); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("Logging attempted."), nil
			},
		},
		{
			Name: "test_missing_capability", Description: "Requires the client's sampling capability: a 2026-07-28 request without it is refused with -32021 before the tool runs.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("sampling")},
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("The client declared the sampling capability."), nil
			},
		},
		{
			Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", Permission: testCap, ReadOnly: mcpmw.HintYes,
			InputSchema: schema2020,
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				name := args.OptString("name", "")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("Schema accepted for " + name + "."), nil
			},
		},
		{
			Name: "test_custom_header", Description: "Echoes region, which clients also send in the Mcp-Param-Region header (x-mcp-header).", Permission: testCap, ReadOnly: mcpmw.HintYes,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"Any text; mirrored in Mcp-Param-Region.","x-mcp-header":"Region"}},"required":["region"]}`),
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				region := args.String("region")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("region: " + region), nil
			},
		},
	}
}

// schema2020 is the input schema the json-schema-2020-12 scenario expects
// to find verbatim in tools/list: $schema, $defs with an $anchor,
// allOf/anyOf, if/then/else and additionalProperties.
var schema2020 = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`)

// sleep waits for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func formatFloat(f float64) string {
	raw, _ := json.Marshal(f)
	return string(raw)
}

// redPixelPNG is a 1x1 red PNG image.
var redPixelPNG = func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}()

// toneWAV is 10 ms of a 440 Hz sine tone: 8 kHz, mono, 16-bit PCM.
var toneWAV = func() []byte {
	const rate, samples = 8000, 80
	data := make([]byte, 0, 44+2*samples)
	le := binary.LittleEndian
	data = append(data, "RIFF"...)
	data = le.AppendUint32(data, 36+2*samples)
	data = append(data, "WAVEfmt "...)
	data = le.AppendUint32(data, 16)     // fmt chunk size
	data = le.AppendUint16(data, 1)      // PCM
	data = le.AppendUint16(data, 1)      // channels
	data = le.AppendUint32(data, rate)   // sample rate
	data = le.AppendUint32(data, rate*2) // byte rate
	data = le.AppendUint16(data, 2)      // block align
	data = le.AppendUint16(data, 16)     // bits per sample
	data = append(data, "data"...)
	data = le.AppendUint32(data, 2*samples)
	for i := 0; i < samples; i++ {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
		data = le.AppendUint16(data, uint16(v))
	}
	return data
}()
