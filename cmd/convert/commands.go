package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/migrate/cqlsink"
)

func runPlan(ctx context.Context, c *config, src migrate.Source, stdout io.Writer) error {
	opts, err := c.options("", nil)
	if err != nil {
		return err
	}
	rep, err := migrate.Plan(ctx, src, opts)
	if err != nil {
		return err
	}
	for _, f := range rep.Families {
		fmt.Fprintf(stdout, "%s -> %s (%s): %s\n", f.Family, f.Table, f.Shape, f.Reason)
		fmt.Fprintf(stdout, "  rows %d, cells %d, TTL'd %d, counters %d, already expired %d; widest row %s: %d cells, %d bytes\n",
			f.Rows, f.Cells, f.TTLCells, f.Counters, f.Expired, f.Widest.Key, f.Widest.Cells, f.Widest.Bytes)
		for _, w := range f.Warnings {
			fmt.Fprintf(stdout, "  warning: %s\n", w)
		}
		for _, l := range f.Large {
			fmt.Fprintf(stdout, "  LARGE partition %s: %d cells, %d bytes\n", l.Key, l.Cells, l.Bytes)
		}
		if f.Suggestion != "" {
			fmt.Fprintf(stdout, "  suggestion: %s\n", f.Suggestion)
		}
		fmt.Fprintf(stdout, "  %s;\n", f.CreateTable)
		for _, ix := range f.Indexes {
			fmt.Fprintf(stdout, "  %s;\n", ix)
		}
	}
	return writeJSON(c.report, rep)
}

func runSchema(ctx context.Context, c *config, src migrate.Source, stdout io.Writer, log *slog.Logger) error {
	t := c.target
	opts, err := c.options(t.keyspace, log)
	if err != nil {
		return err
	}
	sink, err := openSink(ctx, c, t, log)
	if err != nil {
		return err
	}
	schema, err := migrate.WriteSchema(ctx, src, sink, opts)
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, st := range schema.Statements() {
		fmt.Fprintln(stdout, st.Inline())
	}
	return nil
}

func runData(ctx context.Context, c *config, src migrate.Source, stdout, stderr io.Writer, log *slog.Logger) error {
	t := c.target
	opts, err := c.options(t.keyspace, log)
	if err != nil {
		return err
	}
	opts.CheckpointPath = c.checkpoint
	if !c.quiet {
		opts.Progress = progressBars{w: stderr}
	}
	if c.planFile != "" {
		b, err := os.ReadFile(c.planFile)
		if err != nil {
			return fmt.Errorf("--plan: %w", err)
		}
		var plan migrate.PlanReport
		if err := json.Unmarshal(b, &plan); err != nil {
			return fmt.Errorf("--plan %s: %w", c.planFile, err)
		}
		opts.Totals = plan.Totals()
	}
	sink, err := openSink(ctx, c, t, log)
	if err != nil {
		return err
	}
	rep, err := migrate.Convert(ctx, src, sink, opts)
	if cerr := sink.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close target: %w", cerr)
		rep.Errors = append(rep.Errors, err.Error())
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "family\ttable\tshape\trows\tcells\texpired\tttl'd\tcounters\tcells/s")
	for _, f := range rep.Families {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.0f\n", f.Family, f.Table, f.Shape, f.Rows, f.Cells, f.Expired, f.TTLCells, f.Counters, f.CellsPerSecond)
	}
	tw.Flush()
	if rerr := writeJSON(c.report, rep); err == nil {
		err = rerr
	}
	if err != nil && c.checkpoint != "" && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w (run again with the same flags to resume from %s)", err, c.checkpoint)
	}
	return err
}

func runVerify(ctx context.Context, c *config, src migrate.Source, stdout io.Writer, log *slog.Logger) error {
	t := c.target
	opts, err := c.options(t.keyspace, log)
	if err != nil {
		return err
	}
	var target migrate.Target
	if t.filePath != "" {
		tables, err := migrate.Tables(ctx, src, opts)
		if err != nil {
			return err
		}
		ft, err := migrate.OpenFileTarget(t.filePath, tables)
		if err != nil {
			return err
		}
		defer ft.Close()
		target = ft
	} else {
		cons, err := c.gocqlConsistency()
		if err != nil {
			return err
		}
		cfg, err := c.cqlConfig(t, log)
		if err != nil {
			return err
		}
		// As of --now, as the data run wrote the TTLs.
		cfg.Consistency, cfg.Now = cons, c.clock()
		ct, err := cqlsink.OpenTargetConfig(ctx, cfg)
		if err != nil {
			return fmt.Errorf("--to %s: %w", c.to, loginHint(err, "target"))
		}
		defer ct.Close()
		target = ct
	}
	rep, err := migrate.Verify(ctx, src, target, migrate.VerifyOptions{Options: opts, Tolerance: c.tolerance, Examples: c.examples})
	if rep != nil {
		for _, f := range rep.Families {
			fmt.Fprintf(stdout, "%s -> %s: %d source cells, %d matched, %d missing, %d extra, %d different\n",
				f.Family, f.Table, f.SourceCells, f.Matched, f.Missing, f.Extra, f.Different)
			for _, d := range f.Examples {
				fmt.Fprintf(stdout, "  %s %s [%s] %s", d.Kind, d.Column, d.Key, d.Field)
				if d.Source != "" {
					fmt.Fprintf(stdout, " source=%s", d.Source)
				}
				if d.Target != "" {
					fmt.Fprintf(stdout, " target=%s", d.Target)
				}
				fmt.Fprintln(stdout)
			}
		}
		if rerr := writeJSON(c.report, rep); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("%w: %d missing, %d extra, %d different", errDifferences, rep.Missing, rep.Extra, rep.Different)
	}
	fmt.Fprintf(stdout, "OK: %d cells match\n", rep.Matched)
	return nil
}
