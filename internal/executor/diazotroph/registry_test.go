package diazotroph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// fake is a diazotroph that returns its name as content.
type fake struct{ typ, name string }

func (f fake) Type() string { return f.typ }

func (f fake) Execute(context.Context, diazotroph.Request) (diazotroph.Result, error) {
	return diazotroph.Result{Content: f.name}, nil
}

func TestRegistry_LookupFindsRegisteredType(t *testing.T) {
	t.Parallel()
	r := diazotroph.NewRegistry(fake{"PATCH_DIAZOTROPH", "patch"}, diazotroph.NewCommand(diazotroph.CommandOptions{Run: "true"}))
	d, err := r.Lookup("PATCH_DIAZOTROPH")
	require.NoError(t, err)
	require.Equal(t, fake{"PATCH_DIAZOTROPH", "patch"}, d)
	d, err = r.Lookup(diazotroph.CommandType)
	require.NoError(t, err)
	require.IsType(t, &diazotroph.Command{}, d)
}

func TestRegistry_LookupOfUnknownTypeListsRegisteredTypes(t *testing.T) {
	t.Parallel()
	r := diazotroph.NewRegistry(fake{"PATCH_DIAZOTROPH", "patch"}, fake{"COMMAND_DIAZOTROPH", "command"})
	d, err := r.Lookup("TRIAGE_DIAZOTROPH")
	require.ErrorIs(t, err, diazotroph.ErrUnknownType)
	require.EqualError(t, err, `unknown diazotroph type "TRIAGE_DIAZOTROPH" (registered: [COMMAND_DIAZOTROPH PATCH_DIAZOTROPH])`)
	require.Nil(t, d)

	_, err = diazotroph.NewRegistry().Lookup("PATCH_DIAZOTROPH")
	require.EqualError(t, err, `unknown diazotroph type "PATCH_DIAZOTROPH" (registered: [])`)
}

func TestRegistry_RegisterReplacesSameType(t *testing.T) {
	t.Parallel()
	r := diazotroph.NewRegistry(fake{"PATCH_DIAZOTROPH", "first"})
	r.Register(fake{"PATCH_DIAZOTROPH", "second"})
	d, err := r.Lookup("PATCH_DIAZOTROPH")
	require.NoError(t, err)
	res, err := d.Execute(t.Context(), diazotroph.Request{})
	require.NoError(t, err)
	require.Equal(t, "second", res.Content)
	require.Equal(t, []string{"PATCH_DIAZOTROPH"}, r.Types())
}

func TestRegistry_TypesAreSorted(t *testing.T) {
	t.Parallel()
	r := diazotroph.NewRegistry(fake{"TRIAGE_DIAZOTROPH", ""}, fake{"COMMAND_DIAZOTROPH", ""})
	r.Register(fake{"PATCH_DIAZOTROPH", ""})
	require.Equal(t, []string{"COMMAND_DIAZOTROPH", "PATCH_DIAZOTROPH", "TRIAGE_DIAZOTROPH"}, r.Types())
	require.Empty(t, diazotroph.NewRegistry().Types())
}

func TestRegistry_ConcurrentRegisterAndLookup(t *testing.T) {
	t.Parallel()
	r := diazotroph.NewRegistry()
	types := []string{"A_DIAZOTROPH", "B_DIAZOTROPH", "C_DIAZOTROPH", "D_DIAZOTROPH"}
	done := make(chan struct{})
	for _, typ := range types {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				r.Register(fake{typ, typ})
				_, _ = r.Lookup(typ)
				_ = r.Types()
			}
		}()
	}
	for range types {
		<-done
	}
	require.Equal(t, types, r.Types())
}
